"""The end every scripted worker child shares (tests/test_abtest.py, tests/test_tune_rounds.py): the module `runner`
the test's script built replaces profiling.gpu.runner (CuPy), then the real profiling.gpu.worker.child_main runs the
job file named on the command line."""

RUN_CHILD_MAIN = """
sys.modules["profiling.gpu.runner"] = runner
import profiling.gpu
profiling.gpu.runner = runner
from profiling.gpu.jobs import Job
from profiling.gpu.worker import child_main
sys.exit(child_main(Job.from_dict(json.load(open(sys.argv[1])))))
"""
