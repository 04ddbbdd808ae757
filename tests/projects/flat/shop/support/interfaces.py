"""Interfaces the services implement; callers look the service up by its interface."""

from zope.interface import Interface


class IInbox(Interface):
    def open_conversation(*, body):
        """Open a conversation with support."""


class IAuditLog(Interface):
    def record(*, entry):
        """Record an entry."""
