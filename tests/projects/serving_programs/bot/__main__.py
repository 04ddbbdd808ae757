"""`python -m bot`: a package's `__main__.py` that runs until it is stopped (`loop.run_forever()`)
is a service, a fleet of which restarts together, not a script someone runs and watches: its
start-up retry is judged as a service's."""

import asyncio
import logging

log = logging.getLogger(__name__)


async def connect(client):
    while True:  # expect: IDM203 "no attempt limit and no deadline"
        try:
            return await client.whoami()
        except ConnectionError:
            log.error("homeserver unreachable, retrying in 10 seconds")
            await asyncio.sleep(10)  # expect: IDM202 "no random component"


loop = asyncio.new_event_loop()
loop.run_until_complete(connect(object()))
loop.run_forever()
