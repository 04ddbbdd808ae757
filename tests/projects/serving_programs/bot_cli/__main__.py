"""`python -m bot_cli`: a package's `__main__.py` that does its work and ends is a program a person
runs and watches: its retry is one client's, not a fleet's."""

import asyncio
import logging

log = logging.getLogger(__name__)


async def connect(client):
    while True:  # ok: IDM203 a run someone watches, not a service's
        try:
            return await client.whoami()
        except ConnectionError:
            log.error("homeserver unreachable, retrying in 10 seconds")
            await asyncio.sleep(10)  # ok: IDM202 one client, no herd


asyncio.run(connect(object()))
