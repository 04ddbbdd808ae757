"""Waits through a module that imports the event loop library under its own name
(`compat.event_loop` is trio or asyncio): its `sleep` is the library's. Tricky negative: the
same sleep given a random delay."""

import random

import httpx

from billing import compat


async def send(url, body):
    async with httpx.AsyncClient() as client:
        for attempt in range(3):
            try:
                return await client.put(url, json=body)
            except httpx.TransportError:
                await compat.event_loop.sleep(2**attempt)  # expect: IDM202 "sleeps a fixed or computed delay"
    return None


async def send_spread(url, body):
    async with httpx.AsyncClient() as client:
        for attempt in range(3):
            try:
                return await client.put(url, json=body)
            except httpx.TransportError:
                await compat.event_loop.sleep(random.uniform(0, 2**attempt))  # ok: IDM202 jittered
    return None
