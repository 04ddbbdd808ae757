"""Per-file time against file size: a generated file of N retry loops, N from 250 to 4,000.

Time per function should stay flat (linear total time). Usage: python benchmarks/scaling.py
"""

from __future__ import annotations

import sys
import time

from idemlint.config import Config
from idemlint.engine import check_source
from idemlint.rules import ALL_RULES

LOOP = """
def charge_{i}(order):
    for attempt in range(3):
        try:
            return requests.post(URL, json=order, headers={{"Idempotency-Key": str(uuid.uuid4())}}, timeout=5)
        except requests.ConnectionError:
            time.sleep(2 ** attempt)
"""


def main(sizes: list[int]) -> None:
    print(f"{'functions':>10}{'seconds':>10}{'ms/function':>13}{'findings':>10}")
    for n in sizes:
        source = "import time, uuid, requests\nURL = 'https://psp.example'\n" + "".join(
            LOOP.format(i=i) for i in range(n)
        )
        started = time.perf_counter()
        result = check_source(source, "generated.py", Config(), ALL_RULES)
        seconds = time.perf_counter() - started
        print(f"{n:>10}{seconds:>10.2f}{1000 * seconds / n:>13.2f}{len(result.findings):>10}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [250, 500, 1000, 2000, 4000])
