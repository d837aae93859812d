"""Runs and their points.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(64), nullable=False, unique=True),
        sa.Column("kind", sa.String(16), nullable=False),
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
        sa.Column("results_json", sa.Text),
    )
    op.create_index("ix_runs_series", "runs", ["profile", "hardware", "workload"])
    op.create_table(
        "points",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "run_seq",
            sa.Integer,
            sa.ForeignKey("runs.seq", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("depth", sa.Integer, nullable=False),
        sa.Column("concurrency", sa.Integer, nullable=False),
        sa.Column("agg_tok_s", sa.Float),
        sa.Column("per_req_tok_s", sa.Float),
        sa.Column("accept_length", sa.Float),
        sa.Column("verify_steps_s", sa.Float),
        sa.Column("goodput_tok_s", sa.Float),
        sa.Column("kv_max_total_tokens", sa.Integer),
        sa.Column("max_running_requests", sa.Integer),
        sa.Column("speedup_agg", sa.Float),
        sa.Column("speedup_per_req", sa.Float),
        sa.Column("outcome", sa.String(16)),
        sa.Column("samples_json", sa.Text),
        sa.Column("intervals_json", sa.Text),
        sa.Column("position_accept_json", sa.Text),
        sa.Column("verdicts_json", sa.Text),
        sa.Column("point_json", sa.Text),
        sa.UniqueConstraint("run_seq", "depth", "concurrency", name="uq_points_run_point"),
    )


def downgrade() -> None:
    op.drop_table("points")
    op.drop_index("ix_runs_series", "runs")
    op.drop_table("runs")
