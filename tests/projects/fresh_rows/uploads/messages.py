"""The callers of a message's sending: one builds a new message, one rebuilds a stored one by its key."""

from uploads.models import Message


def welcome(user):
    message = Message(subject=f"Welcome, {user}")
    message.full_clean()
    message.save()
    message.send_draft()


def send_again(pk):
    message = Message(pk=pk, subject="Again")
    message.save()
    message.send_stored()
