"""specperf bisect's pairs: every pair of boots of every step, so a rerun goes on from them.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "bisect_pairs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "run_seq", sa.Integer, sa.ForeignKey("runs.seq", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("step", sa.String(64), nullable=False),
        sa.Column("pair", sa.Integer, nullable=False),
        sa.Column("base_commit", sa.String(64), nullable=False),
        sa.Column("head_commit", sa.String(64), nullable=False),
        sa.Column("boot_order", sa.String(16), nullable=False),
        sa.Column("server_seconds", sa.Float, nullable=False),
        sa.Column("pair_json", sa.Text, nullable=False),
        sa.Column("recorded_at", sa.String(40), nullable=False),
        sa.UniqueConstraint("run_seq", "step", "pair", name="uq_bisect_pairs_step_pair"),
    )


def downgrade() -> None:
    op.drop_table("bisect_pairs")
