"""Which NumPy calls in the attention kernel run in parallel on 2 Python threads (GIL released)?
BLAS pinned to 1 thread; wall time of 2 threads x work vs 1 thread x work."""
import time
from concurrent.futures import ThreadPoolExecutor
import sys, os
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _alloc import tune
tune("std")
import numpy as np
from minimodel.training.runtime import set_blas_threads

set_blas_threads(1)
pool = ThreadPoolExecutor(2)
rng = np.random.default_rng(0)
q = rng.standard_normal((8, 4, 128, 64), dtype=np.float32)
k = rng.standard_normal((8, 4, 128, 64), dtype=np.float32)
a = rng.standard_normal((8, 4, 128, 128), dtype=np.float32)
big = rng.standard_normal((1024, 1024), dtype=np.float32)
cases = {
    "stacked matmul q @ k^T (32 x 128x64x128)": lambda: [q @ k.swapaxes(-1, -2) for _ in range(20)],
    "2-D matmul 1024^3": lambda: big @ big,
    "np.exp on (8,4,128,128)": lambda: [np.exp(a) for _ in range(20)],
    "a.max(-1) on (8,4,128,128)": lambda: [a.max(axis=-1) for _ in range(20)],
    "a.sum(-1)": lambda: [a.sum(axis=-1) for _ in range(20)],
}
for name, f in cases.items():
    f()
    t1 = min((lambda t0: (f(), time.perf_counter() - t0)[1])(time.perf_counter()) for _ in range(5))
    def two():
        t0 = time.perf_counter()
        fs = [pool.submit(f) for _ in range(2)]
        [x.result() for x in fs]
        return time.perf_counter() - t0
    t2 = min(two() for _ in range(5))
    print(f"{name:<44} 1 thread {1e3 * t1:7.2f} ms   2 threads x2 work {1e3 * t2:7.2f} ms   "
          f"parallel efficiency {2 * t1 / t2 / 2:4.0%}")
