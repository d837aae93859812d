"""The history store's tables at the newest migration (migrations/versions/ creates them)."""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

runs = sa.Table(
    "runs",
    metadata,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.String(64), nullable=False, unique=True),
    # nightly | pr | calibration | run (any other); see rows.run_kind; bisect: a bisection.
    sa.Column("kind", sa.String(16), nullable=False),
    # incomplete (written at the start, still so after a crash) | complete | failed.
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("started_at", sa.String(40), nullable=False),
    sa.Column("finished_at", sa.String(40)),
    sa.Column("tested_commit", sa.String(64)),
    sa.Column("sglang_version", sa.String(64)),
    sa.Column("sglang_git_hash", sa.String(64)),
    sa.Column("profile", sa.String(200)),
    sa.Column("hardware", sa.String(200)),
    sa.Column("backend", sa.String(32)),
    sa.Column("workload", sa.String(64)),
    sa.Column("run_profile", sa.String(64)),
    sa.Column("runner", sa.String(200)),
    sa.Column("tool_version", sa.String(32)),
    sa.Column("depths_json", sa.Text),
    # The whole RunResults as results.json holds it (export and re-import lose nothing).
    sa.Column("results_json", sa.Text),
    sa.Column("recommendation_json", sa.Text),
)

points = sa.Table(
    "points",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_seq", sa.Integer, sa.ForeignKey("runs.seq", ondelete="CASCADE"), nullable=False),
    sa.Column("depth", sa.Integer, nullable=False),
    sa.Column("concurrency", sa.Integer, nullable=False),
    sa.Column("agg_tok_s", sa.Float),
    sa.Column("per_req_tok_s", sa.Float),
    sa.Column("accept_length", sa.Float),
    # tok/s = accept length x verify steps/s: the step-time half of a change's attribution.
    sa.Column("verify_steps_s", sa.Float),
    sa.Column("goodput_tok_s", sa.Float),
    sa.Column("kv_max_total_tokens", sa.Integer),
    sa.Column("max_running_requests", sa.Integer),
    sa.Column("speedup_agg", sa.Float),
    sa.Column("speedup_per_req", sa.Float),
    # The worst verdict of the point (regression > improvement > pass > ...), None: not judged.
    sa.Column("outcome", sa.String(16)),
    sa.Column("samples_json", sa.Text),
    sa.Column("intervals_json", sa.Text),
    sa.Column("position_accept_json", sa.Text),
    sa.Column("verdicts_json", sa.Text),
    sa.Column("point_json", sa.Text),
    # An open-loop point's load ("rate=4", "trace"; its concurrency 0); "": closed loop.
    sa.Column("load", sa.String(64), nullable=False, server_default=""),
    sa.UniqueConstraint("run_seq", "depth", "concurrency", "load", name="uq_points_run_point"),
)

# specperf bisect: each pair of boots of each step (a bisection is one run of kind "bisect").
bisect_pairs = sa.Table(
    "bisect_pairs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("run_seq", sa.Integer, sa.ForeignKey("runs.seq", ondelete="CASCADE"), nullable=False),
    # The step's name (run/bisect/steps.py step_key: the bisection and its two commits,
    # and the kind for the culprit's).
    sa.Column("step", sa.String(64), nullable=False),
    sa.Column("pair", sa.Integer, nullable=False),  # 0: the step's first pair
    sa.Column("base_commit", sa.String(64), nullable=False),
    sa.Column("head_commit", sa.String(64), nullable=False),
    sa.Column("boot_order", sa.String(16), nullable=False),  # "base,head" or "head,base"
    sa.Column("server_seconds", sa.Float, nullable=False),
    sa.Column("pair_json", sa.Text, nullable=False),  # gate/ab/estimate.py Pair
    sa.Column("recorded_at", sa.String(40), nullable=False),
    sa.UniqueConstraint("run_seq", "step", "pair", name="uq_bisect_pairs_step_pair"),
)
