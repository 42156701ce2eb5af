"""What lesson 10's model costs here: one training step, a forward pass, and the phase change.

    .venv/bin/python benchmarks/bench_induction.py [--steps 700] [--pairs 60]

1. The forward and hand-written backward pass of :func:`helpers.induction.train`'s loop on a
   batch of the shipped settings (64 sequences of 32 tokens, d_model 128), float32: median wall
   time and CPU time over 30 calls.
2. ``model.forward`` of the shipped model on one sequence of 32 tokens (what the explorer and the
   lesson call) and on 256 sequences.
3. The lesson's retraining cell: ``train(seed=0)`` until the loss on repeats falls below 1 nat,
   at most ``--steps`` steps: the step and the seconds (wall and CPU) it took. The issue's target:
   the phase change within 60 s.
4. One whole training step (forward, backward, Adam) in NumPy against the same model in PyTorch
   autograd: the same starting weights, batches, float32 and one thread, timed in turn pair by
   pair; the median ratio (the issue's target: NumPy within 1.5x). PyTorch is an optional extra
   for this part only, never a course dependency: without it, part 4 says how to install it.

The load average is printed with the results: the machine is often shared, and wall times grow
with it while CPU times do not (much).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import time

import numpy as np

from helpers import induction
from helpers.blas import one_blas_thread
from helpers.induction.backward import loss_and_grads
from helpers.induction.model import init_params
from helpers.induction.task import mixed_batch, repeat_task
from helpers.induction.trainer import SHIPPED
from helpers.training import Adam

TORCH_INSTALL = ".venv/bin/pip install torch==2.13.0"


def _median_times(fn, repeats: int) -> tuple[float, float]:
    wall, cpu = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=700)
    parser.add_argument("--pairs", type=int, default=60, help="training steps timed in part 4")
    args = parser.parse_args()
    print(f"load average at the start: {os.getloadavg()[0]:.1f}; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")  # fmt: skip

    s = dataclasses.asdict(SHIPPED)
    params = init_params(s["vocab_size"], s["d_model"], s["n_heads"], s["max_len"], seed=0)
    params = {name: value.astype(np.float32) for name, value in params.items()}
    data = repeat_task(np.random.default_rng(0), s["batch"], s["max_len"], s["vocab_size"])
    with one_blas_thread():
        wall, cpu = _median_times(
            lambda: loss_and_grads(params, data.tokens, data.targets, s["n_heads"]), 30
        )
    print(f"1. forward + backward, batch {s['batch']} x {s['max_len']} tokens, d_model "
          f"{s['d_model']}, float32: {1e3 * wall:.1f} ms wall, {1e3 * cpu:.1f} ms CPU "
          f"(median of 30)")  # fmt: skip

    model = induction.load()
    one = data.tokens[0]
    many = repeat_task(np.random.default_rng(1), 256, 32, 64).tokens
    for label, tokens in (("1 sequence", one), ("256 sequences", many)):
        wall, cpu = _median_times(lambda t=tokens: model.forward(t), 10)
        print(f"2. model.forward, {label}: {1e3 * wall:.1f} ms wall, {1e3 * cpu:.1f} ms CPU")

    start, cpu_start = time.perf_counter(), time.process_time()
    found = {}

    def stop(step, history):
        if history.loss_repeat[-1] < 1.0 and not found:
            found.update(step=step, wall=time.perf_counter() - start,
                         cpu=time.process_time() - cpu_start)  # fmt: skip
            return True
        return False

    induction.train(seed=0, steps=args.steps, eval_every=SHIPPED.eval_every, callback=stop)
    if found:
        print(
            f"3. retraining from seed 0: loss on repeats below 1 nat at step {found['step']}, "
            f"after {found['wall']:.1f} s wall, {found['cpu']:.1f} s CPU (target: 60 s)"
        )
    else:
        print(f"3. no phase change within {args.steps} steps")
    against_torch(args.pairs)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


def _torch_step(params: dict[str, np.ndarray], n_heads: int, lr: float):
    """The same model's training step in PyTorch autograd (float32, the same starting weights):
    a function of ``(tokens, targets)`` that runs forward, backward and an Adam update."""
    import torch

    weights = {name: torch.tensor(value, dtype=torch.float32, requires_grad=True)
               for name, value in params.items()}  # fmt: skip
    optimiser = torch.optim.Adam(weights.values(), lr=lr)
    n = params["W_pos"].shape[0]
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)

    def step(tokens, targets):
        w = weights
        b, n = tokens.shape
        x = w["W_E"][tokens] + w["W_pos"][:n]
        d = x.shape[-1]
        for layer in range(w["W_Q"].shape[0]):
            q, k, v = ((x @ w[m][layer]).view(b, n, n_heads, d // n_heads).transpose(1, 2)
                       for m in ("W_Q", "W_K", "W_V"))  # fmt: skip
            scores = (q @ k.transpose(-1, -2)) * (d // n_heads) ** -0.5
            attention = torch.softmax(scores.masked_fill(mask[:n, :n], float("-inf")), dim=-1)
            z = (attention @ v).transpose(1, 2).reshape(b, n, d)
            x = x + z @ w["W_O"][layer]
        logits = x @ w["W_U"]
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-1
        )
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        return loss.item()

    return step


def against_torch(repeats: int) -> None:
    """Part 4: one training step, NumPy's hand-written backward against PyTorch autograd."""
    try:
        import torch
    except ImportError:
        print(f"4. PyTorch not installed: skipped (for this part only: {TORCH_INSTALL})")
        return
    torch.set_num_threads(1)
    s = dataclasses.asdict(SHIPPED)
    params = init_params(s["vocab_size"], s["d_model"], s["n_heads"], s["max_len"], seed=0)
    params = {name: value.astype(np.float32) for name, value in params.items()}
    rng = np.random.default_rng(0)
    batches = [mixed_batch(rng, s["batch"], s["max_len"], s["vocab_size"], s["min_repeat"],
                           s["max_repeat"], s["distinct"], s["max_copies"])
               for _ in range(repeats)]  # fmt: skip
    optimiser = Adam(params, lr=s["lr"])

    def numpy_step(tokens, targets):
        loss, grads, _ = loss_and_grads(params, tokens, targets, s["n_heads"])
        optimiser.step(params, grads)
        return loss

    torch_step = _torch_step(init_params(s["vocab_size"], s["d_model"], s["n_heads"],
                                         s["max_len"], seed=0), s["n_heads"], s["lr"])  # fmt: skip
    torch_batches = [(torch.from_numpy(t), torch.from_numpy(y)) for t, y in batches]
    # The two agree on the first step's loss (the same weights, batch and arithmetic in float32).
    first = numpy_step(*batches[0]), torch_step(*torch_batches[0])
    for _ in range(3):  # warm both up (PyTorch's first steps allocate)
        numpy_step(*batches[1]), torch_step(*torch_batches[1])
    ratios, times = [], {"numpy": [], "torch": []}
    with one_blas_thread():
        for (tokens, targets), (t_tokens, t_targets) in zip(batches, torch_batches):
            # In turn, pair by pair: a slow moment on a shared machine hits both sides.
            a = time.perf_counter()
            numpy_step(tokens, targets)
            b = time.perf_counter()
            torch_step(t_tokens, t_targets)
            c = time.perf_counter()
            times["numpy"].append(b - a)
            times["torch"].append(c - b)
            ratios.append((b - a) / (c - b))
    print(
        f"4. one training step (forward, backward, Adam), batch {s['batch']} x {s['max_len']} "
        f"tokens, d_model {s['d_model']}, float32, one thread; torch {torch.__version__}: NumPy "
        f"{1e3 * statistics.median(times['numpy']):.1f} ms, PyTorch autograd "
        f"{1e3 * statistics.median(times['torch']):.1f} ms; ratio NumPy / PyTorch, median of "
        f"{repeats} pairs {statistics.median(ratios):.2f}x (quartiles "
        f"{np.percentile(ratios, 25):.2f}-{np.percentile(ratios, 75):.2f}; target 1.5x); first "
        f"losses {first[0]:.5f} and {first[1]:.5f}"
    )


if __name__ == "__main__":
    main()
