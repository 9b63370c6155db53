"""OpenBLAS with 2 threads when another process keeps one core busy: wall and CPU per GEMM."""
import os, sys, time, statistics
import numpy as np
a = np.random.rand(2048, 256).astype(np.float32); b = np.random.rand(256, 1024).astype(np.float32)
ws, cs = [], []
for _ in range(40):
    c0, t0 = time.process_time(), time.perf_counter(); a @ b
    ws.append(time.perf_counter() - t0); cs.append(time.process_time() - c0)
print(f"threads={os.environ.get('OPENBLAS_NUM_THREADS')} load={os.getloadavg()[0]:.1f}: "
      f"wall median {1e3*statistics.median(ws):.1f} ms (min {1e3*min(ws):.1f}), cpu median {1e3*statistics.median(cs):.1f} ms")
