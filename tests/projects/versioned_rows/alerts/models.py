"""SQLAlchemy models: one compares a version column on every flush, one keeps a pair unique
through a named index; others index a pair without keeping it unique, or keep it unique only
among some rows or over an expression."""

from sqlalchemy import Boolean, Column, DateTime, Index, Integer, String, func
from sqlalchemy.orm import declarative_base

Base = declarative_base()


class Hook(Base):
    __tablename__ = "hooks"
    id = Column(Integer, primary_key=True)
    deployed = Column(Boolean, default=False)
    version_id = Column(Integer, nullable=False)

    __mapper_args__ = {"version_id_col": version_id}


class Alert(Base):
    __tablename__ = "alerts"
    id = Column(Integer, primary_key=True)
    fingerprint = Column(String(64))
    starts_at = Column(DateTime)
    status = Column(String(16))

    __table_args__ = (
        Index("ix_alerts_fingerprint_status", "fingerprint", "status"),
        Index("ix_alerts_fingerprint_starts_at", "fingerprint", "starts_at", unique=True),
    )


class Silence(Base):
    __tablename__ = "silences"
    id = Column(Integer, primary_key=True)
    fingerprint = Column(String(64))
    status = Column(String(16))

    __table_args__ = (Index("ix_silences_fingerprint_status", "fingerprint", "status"),)


class Release(Base):
    __tablename__ = "releases"
    id = Column(Integer, primary_key=True)
    deployed = Column(Boolean, default=False)


class Trial(Base):
    __tablename__ = "trials"
    id = Column(Integer, primary_key=True)
    user_id = Column(Integer)
    status = Column(String(16))

    __table_args__ = (Index("uq_trials_active_user", "user_id", unique=True, postgresql_where=status == "active"),)


class Account(Base):
    __tablename__ = "accounts"
    id = Column(Integer, primary_key=True)
    email = Column(String(200))
    tenant_id = Column(Integer)

    __table_args__ = (Index("uq_accounts_email", func.lower(email), "tenant_id", unique=True),)
