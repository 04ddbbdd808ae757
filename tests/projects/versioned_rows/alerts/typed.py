"""A SQLAlchemy 2.0 model declared with `mapped_column` alone (its key comes from a mixin
elsewhere): its version column is read all the same."""

from sqlalchemy.orm import Mapped, mapped_column

from alerts.models import Base


class Webhook(Base):
    __tablename__ = "webhooks"
    deployed: Mapped[bool] = mapped_column(default=False)
    version_id: Mapped[int] = mapped_column(nullable=False)

    __mapper_args__ = {"version_id_col": version_id}
