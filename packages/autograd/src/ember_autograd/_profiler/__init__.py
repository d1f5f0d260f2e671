"""The profiler's parts below its public module (`ember_autograd.profiler`): FLOP formulas,
memory attribution, Python stacks and the summary table."""
