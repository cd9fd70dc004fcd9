"""One Profile: the ETDump's events (with their units and roles), the Execute runs, and what each
instruction is (backend or CPU kernel, op type, source location), joined from ETRecord / .pte.

Built by :func:`load`. Analysis lives in ``etscope.analysis``; this package only joins inputs:
``model`` (the Profile and its parts), ``build`` (load, roles, values and units, runs),
``instructions`` (what each instruction is), ``plans`` and ``join`` (the .pte / ETRecord side),
``methods`` (runs of several methods in one ETDump), ``subset`` (a profile of some runs),
``accumulation`` (backend events repeated across executes) and ``repeats`` (runs that logged the
same events).
"""
from etscope.profile.build import build, load
from etscope.profile.methods import MAX_INSTRUCTION_SETS
from etscope.profile.model import (CPU, DELEGATE_CALL, METHOD_EXECUTE, OPERATOR_CALL, ROLE_ALLOCATION, ROLE_DEBUG,
                                   ROLE_DELEGATE_CALL, ROLE_DELEGATE_INTERNAL, ROLE_KERNEL, ROLE_METHOD, ROLE_NAMES,
                                   ROLE_OPERATOR_CALL, ROLE_OTHER, UNKNOWN_DELEGATE, Accumulation, Instruction,
                                   MethodSplit, PhaseSelection, Profile, SourceFiles, end_times, event_runs,
                                   guess_op_from_kernel, run_ends)
from etscope.profile.subset import compact_runs, select_runs

__all__ = ["Accumulation", "CPU", "DELEGATE_CALL", "Instruction", "MAX_INSTRUCTION_SETS", "METHOD_EXECUTE",
           "MethodSplit", "OPERATOR_CALL", "PhaseSelection", "Profile", "ROLE_ALLOCATION", "ROLE_DEBUG", "ROLE_DELEGATE_CALL",
           "ROLE_DELEGATE_INTERNAL", "ROLE_KERNEL", "ROLE_METHOD", "ROLE_NAMES", "ROLE_OPERATOR_CALL", "ROLE_OTHER",
           "SourceFiles", "UNKNOWN_DELEGATE", "build", "end_times", "event_runs", "guess_op_from_kernel", "load",
           "run_ends", "compact_runs", "select_runs"]
