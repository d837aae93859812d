"""Open-loop points: a point's load ("rate=4", "trace"; "" for a closed-loop point) in its key.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("points") as batch:
        batch.add_column(sa.Column("load", sa.String(64), nullable=False, server_default=""))
        batch.drop_constraint("uq_points_run_point", type_="unique")
        batch.create_unique_constraint(
            "uq_points_run_point", ["run_seq", "depth", "concurrency", "load"]
        )


def downgrade() -> None:
    with op.batch_alter_table("points") as batch:
        batch.drop_constraint("uq_points_run_point", type_="unique")
        batch.create_unique_constraint("uq_points_run_point", ["run_seq", "depth", "concurrency"])
        batch.drop_column("load")
