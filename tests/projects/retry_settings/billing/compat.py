"""One name for whichever event loop library is installed."""

try:
    import trio as event_loop
except ImportError:
    import asyncio as event_loop

__all__ = ["event_loop"]
