"""What attention costs here: the course's NumPy attention against PyTorch, blockwise vs naive.

    .venv/bin/python benchmarks/bench_attention.py [--repeats 15] [--n 1024] [--skip-torch]

1. ``helpers.scaled_dot_product_attention`` against PyTorch's CPU
   ``torch.nn.functional.scaled_dot_product_attention`` on the same inputs (batch 1, h = 8
   heads, n = 1024, d_k = 64), in float32 and float64. The two are called alternately, median
   of the repeats, and their outputs are compared first so that both compute the same thing.
   Target (CURRICULUM.md): ours at most 1.3 x PyTorch's time. Beside them, in the same run: the
   two matrix products alone (Q K^T and weights @ V into reused buffers), the floor under any
   NumPy version. PyTorch's fused kernel never writes the n x n weights; ours must return them, so
   PyTorch doing that too (its softmax and products, weights returned) is timed as well.
2. ``helpers.blockwise.blockwise_attention`` against the naive version at n = 4096 (one head,
   d_k = 64, float64, blocks of 128 keys): median time, peak memory traced by ``tracemalloc``,
   and the largest output difference with and without the causal mask. Target: blockwise
   peak at most 1/10 of the naive peak, same output to 1e-12.

PyTorch is an optional extra for this benchmark only, never a course dependency. Without it,
part 1 is skipped with instructions and part 2 still runs.

Timings vary from run to run and with whatever else the machine is doing; this is a script to
read, not a test. OpenBLAS reads ``OPENBLAS_CORETYPE`` / ``OPENBLAS_L2_SIZE`` from the
environment; the script prints them and the BLAS kernel in use (via threadpoolctl, if
installed), so runs with and without them (``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE``)
can be compared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import tracemalloc

import numpy as np

import helpers
from helpers.blockwise import blockwise_attention

TORCH_INSTALL = ".venv/bin/pip install torch==2.13.0"


def environment() -> None:
    """Print what decides NumPy's speed here: versions, BLAS, threads, OpenBLAS variables."""
    print(f"numpy {np.__version__}, {os.cpu_count()} CPUs")
    for name in (
        "OPENBLAS_CORETYPE",
        "OPENBLAS_L2_SIZE",
        "OPENBLAS_NUM_THREADS",
        "OMP_NUM_THREADS",
    ):
        print(f"  {name} = {os.environ.get(name, '(unset)')}")
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        print(
            "  threadpoolctl not installed: BLAS kernel not reported "
            "(pip install threadpoolctl to see it)"
        )
        return
    for pool in threadpool_info():
        print(
            f"  {pool.get('internal_api')}: {pool.get('version')}, "
            f"kernel {pool.get('architecture')}, {pool.get('num_threads')} threads "
            f"({os.path.basename(pool.get('filepath', ''))})"
        )


def limit_threads(threads: int) -> None:
    """Limit NumPy's BLAS and PyTorch's intra-op pool to ``threads`` threads."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        print(
            "threadpoolctl is not installed: cannot limit NumPy's BLAS threads "
            "(set OPENBLAS_NUM_THREADS before starting Python instead)"
        )
    else:
        threadpool_limits(threads)
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(threads)


def alternating_medians(fns: dict, repeats: int) -> dict[str, float]:
    """Median seconds of each function, calling them in turn so they share the machine's mood."""
    for fn in fns.values():  # warm up: first-call costs (allocation, thread start) aside
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(ts) for name, ts in times.items()}


def peak_bytes(fn) -> int:
    """Peak memory traced by tracemalloc (NumPy's arrays included) while ``fn()`` runs."""
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def against_torch(n: int, heads: int, d_k: int, repeats: int) -> None:
    print(
        f"\n== helpers.scaled_dot_product_attention vs PyTorch: batch 1, h = {heads}, "
        f"n = {n}, d_k = {d_k}, {repeats} repeats, median"
    )
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("PyTorch is not installed, so this comparison is skipped. It is an optional")
        print(f"extra for this benchmark, not a course dependency: `{TORCH_INSTALL}`")
        return
    print(f"torch {torch.__version__}, {torch.get_num_threads()} intra-op threads")
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        Q, K, V = rng.standard_normal((3, 1, heads, n, d_k)).astype(dtype)  # (batch, h, n, d_k)
        tQ, tK, tV = (torch.from_numpy(a) for a in (Q, K, V))  # the same memory, no copies
        ours = helpers.scaled_dot_product_attention(Q, K, V)[0]
        with torch.no_grad():
            theirs = F.scaled_dot_product_attention(tQ, tK, tV).numpy()
        tolerance = 1e-4 if dtype == np.float32 else 1e-10
        agree = np.allclose(ours, theirs, rtol=tolerance, atol=tolerance)
        scores = np.empty((1, heads, n, n), dtype)
        output = np.empty_like(Q)

        def products_only(Q=Q, K=K, V=V, scores=scores, output=output):
            """The floor for any NumPy version: Q K^T and (weights) V alone, into buffers
            allocated once, with no softmax, no scaling and no new n x n array."""
            np.matmul(Q, np.swapaxes(K, -1, -2), out=scores)
            np.matmul(scores, V, out=output)

        def torch_with_weights(tQ=tQ, tK=tK, tV=tV, scale=d_k**-0.5):
            """What ours does, in PyTorch: the weights are made and returned too."""
            weights = torch.softmax(tQ @ tK.transpose(-1, -2) * scale, dim=-1)
            return weights @ tV, weights

        with torch.no_grad():
            medians = alternating_medians(
                {
                    "helpers": lambda Q=Q, K=K, V=V: helpers.scaled_dot_product_attention(Q, K, V),
                    "torch": lambda tQ=tQ, tK=tK, tV=tV: F.scaled_dot_product_attention(tQ, tK, tV),
                    "products": products_only,
                    "torch_weights": torch_with_weights,
                },
                repeats,
            )
        ratio = medians["helpers"] / medians["torch"]
        verdict = "meets" if ratio <= 1.3 else "misses"
        print(
            f"{np.dtype(dtype).name}: helpers {1e3 * medians['helpers']:7.2f} ms, torch "
            f"{1e3 * medians['torch']:7.2f} ms, ratio {ratio:.2f}x ({verdict} the 1.3x target); "
            f"outputs agree to {tolerance:g}: {agree}; output dtype {ours.dtype}"
        )
        print(
            f"    the two matrix products alone (NumPy's floor): {1e3 * medians['products']:7.2f}"
            f" ms = {medians['products'] / medians['torch']:.2f}x torch; the softmax, the scale and"
            f" the new {n}x{n} weights add {1e3 * (medians['helpers'] - medians['products']):.2f}"
            " ms"
        )
        print(
            f"    PyTorch returning the weights too (softmax(Q K^T / sqrt(d_k)) V in torch ops): "
            f"{1e3 * medians['torch_weights']:7.2f} ms; ours is "
            f"{medians['helpers'] / medians['torch_weights']:.2f}x that"
        )


def blockwise_against_naive(n: int, d_k: int, block_size: int, repeats: int) -> None:
    print(
        f"\n== blockwise_attention (block {block_size}) vs naive: one head, n = {n}, "
        f"d_k = {d_k}, float64, {repeats} repeats, median"
    )
    Q, K, V = np.random.default_rng(1).standard_normal((3, n, d_k))
    mask = helpers.causal_mask(n)
    for causal in (False, True):

        def naive(causal=causal):
            return helpers.scaled_dot_product_attention(Q, K, V, mask=mask if causal else None)[0]

        def blockwise(causal=causal):
            return blockwise_attention(Q, K, V, block_size=block_size, causal=causal)

        difference = float(np.abs(naive() - blockwise()).max())
        medians = alternating_medians({"naive": naive, "blockwise": blockwise}, repeats)
        peaks = {"naive": peak_bytes(naive), "blockwise": peak_bytes(blockwise)}
        fraction = peaks["blockwise"] / peaks["naive"]
        print(
            f"{'causal' if causal else 'no mask'}: time naive {1e3 * medians['naive']:.0f} ms,"
            f" blockwise {1e3 * medians['blockwise']:.0f} ms "
            f"(ratio {medians['blockwise'] / medians['naive']:.2f}); peak naive "
            f"{peaks['naive'] / 1e6:.1f} MB, blockwise {peaks['blockwise'] / 1e6:.1f} MB "
            f"(1/{1 / fraction:.1f}, {'meets' if fraction <= 0.1 else 'misses'} the 1/10 "
            f"target); max |difference| {difference:.1e} "
            f"({'meets' if difference <= 1e-12 else 'misses'} 1e-12)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=15, help="timed calls per function")
    parser.add_argument("--n", type=int, default=1024, help="sequence length for part 1")
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--d-k", type=int, default=64)
    parser.add_argument("--blockwise-n", type=int, default=4096)
    parser.add_argument("--block-size", type=int, default=128)
    parser.add_argument("--skip-torch", action="store_true", help="only the blockwise part")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="limit NumPy's BLAS (needs threadpoolctl) and PyTorch to this many threads; "
        "1 gives steadier numbers on a busy machine",
    )
    args = parser.parse_args()
    if args.threads:
        limit_threads(args.threads)
    environment()
    if not args.skip_torch:
        against_torch(args.n, args.heads, args.d_k, args.repeats)
    blockwise_against_naive(args.blockwise_n, args.d_k, args.block_size, max(3, args.repeats // 3))


if __name__ == "__main__":
    main()
