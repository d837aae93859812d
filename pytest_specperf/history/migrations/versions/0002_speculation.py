"""Run-level speculation figures: the recommended schedule and where speculation stops paying.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("recommendation_json", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("recommendation_json")
