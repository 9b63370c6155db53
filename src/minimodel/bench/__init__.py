"""``minimodel bench``: the performance targets, measured side by side in fresh processes.

Cases: step, memory, mlm, util, generate (see :mod:`minimodel.bench.cases`). The scripts in
``benchmarks/`` are thin entry points to the same harness.

Modules, in the order a measurement flows through them:

    spec      shapes, FLOP formulas, targets (pure Python)
    runner    Options, the minimodel variants (kernels on/off, allocator, another checkout),
              fresh worker processes, interleaved rounds, quiet-machine checks
    machine   what the machine is and how busy it is
    worker    the entry point of a worker process; tasks / steps / peers run inside it
    cases     which measurements a case makes and how results become rows and targets
    compare   a run against a saved one (--baseline)
    report    Rich tables on the terminal and BENCHMARKS.md
    profiler  per-Function timers (the util case; benchmarks/profile_step.py)

The options are parsed in :mod:`minimodel.commands.bench`.
"""
