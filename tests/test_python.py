"""import ridgeline: every function returns exactly what the command's --json prints for the same
arguments, bad input raises InputError with the command line's message, unknown keywords raise
TypeError, and a value of the wrong type raises InputError naming the argument.

usage: test_python.py BUILD_DIR (the package is BUILD_DIR/python, the executable BUILD_DIR/ridgeline)"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

BUILD = os.path.abspath(sys.argv.pop(1))
sys.path.insert(0, os.path.join(BUILD, "python"))
import ridgeline  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cli(*args):
    """The executable's --json document, or its error line (exit 2)."""
    done = subprocess.run([os.path.join(BUILD, "ridgeline"), *args], capture_output=True, text=True)
    if done.returncode == 2:
        return None, done.stderr.strip().removeprefix("error: ")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), None


class SameAsTheCommandLine(unittest.TestCase):
    def check(self, function, kwargs, args):
        expected, error = cli(*args, "--json")
        self.assertIsNone(error)
        got = function(**kwargs)
        # A search's own wall-clock time is the one field two runs do not share.
        for document in (got, expected):
            document.pop("elapsed_s", None)
        self.assertEqual(got, expected)

    def test_model(self):
        self.check(ridgeline.model, dict(model="llama3-70b"), ["model", "llama3-70b"])

    def test_roofline(self):
        self.check(ridgeline.roofline, dict(hardware="h100-sxm", matmul="8192,8192,28672"),
                   ["roofline", "--hardware", "h100-sxm", "--matmul", "8192,8192,28672"])

    def test_collective(self):
        self.check(ridgeline.collective, dict(hardware="dgx-h100", nodes=4, op="allreduce", bytes="1GiB", sharp=True),
                   ["collective", "--hardware", "dgx-h100", "--nodes", "4", "--op", "allreduce", "--bytes", "1GiB", "--sharp"])

    def test_topology(self):
        self.check(ridgeline.topology, dict(hardware="tpu-v5p", topology="4x4x8"),
                   ["topology", "--hardware", "tpu-v5p", "--topology", "4x4x8"])

    def test_train(self):
        # The example, and switches, lists and what-if settings.
        self.check(ridgeline.train, dict(model="llama3-70b", hardware="tpu-v5p", chips=512, fsdp=64, tp=8),
                   ["train", "--model", "llama3-70b", "--hardware", "tpu-v5p", "--chips", "512", "--fsdp", "64", "--tp", "8"])
        self.check(ridgeline.train, dict(model="llama3-70b", hardware="dgx-h100", chips=64, tp=8, pp=2, sp=True,
                                         stage_layers=[39, 41], set=["chip.hbm.bandwidth=4TB/s", "chip.nvlink.bandwidth=800GB/s"]),
                   ["train", "--model", "llama3-70b", "--hardware", "dgx-h100", "--chips", "64", "--tp", "8", "--pp", "2", "--sp", "on",
                    "--stage-layers", "39,41", "--set", "chip.hbm.bandwidth=4TB/s", "--set", "chip.nvlink.bandwidth=800GB/s"])

    def test_serve(self):
        self.check(ridgeline.serve, dict(model="llama3-8b", hardware="dgx-h100", chips=8, tp=2, batch=32, input_len=1024, output_len=256),
                   ["serve", "--model", "llama3-8b", "--hardware", "dgx-h100", "--chips", "8", "--tp", "2", "--batch", "32",
                    "--input-len", "1024", "--output-len", "256"])

    def test_search_train(self):
        self.check(ridgeline.search_train, dict(model="llama3-8b", hardware="dgx-h100", chips=16, global_batch_tokens=1048576, threads=1),
                   ["search", "train", "--model", "llama3-8b", "--hardware", "dgx-h100", "--chips", "16", "--global-batch-tokens", "1048576",
                    "--threads", "1"])

    def test_search_serve(self):
        self.check(ridgeline.search_serve, dict(model="llama3-8b", hardware="dgx-h100", chips=8, input_len=1024, output_len=256,
                                                slo_ttft_ms=500, slo_tpot_ms=50),
                   ["search", "serve", "--model", "llama3-8b", "--hardware", "dgx-h100", "--chips", "8", "--input-len", "1024",
                    "--output-len", "256", "--slo-ttft-ms", "500", "--slo-tpot-ms", "50"])

    def test_ctrl_c_stops_a_long_search(self):
        # DeepSeek-V3 on 2,048 H100s is a search of ~30 s; SIGINT after 1 s must end it with
        # KeyboardInterrupt at its next unit of work, not when the search is done.
        timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
        start = time.monotonic()
        timer.start()
        with self.assertRaises(KeyboardInterrupt):
            ridgeline.search_train(model="deepseek-v3", hardware="dgx-h100", chips=2048)
        timer.join()
        self.assertLess(time.monotonic() - start, 10)
        # and the module still runs the next call
        self.assertEqual(ridgeline.model(model="llama3-8b")["model"]["name"], "llama3-8b")

    def test_threads_share_the_module(self):
        # Eight threads at once: each gets its own answer or its own refusal, as if it ran alone.
        jobs = [dict(model="llama3-8b", hardware="dgx-h100", chips=8 * (1 + i % 2)) for i in range(6)]
        jobs += [dict(model="llama3-8b", hardware="dgx-h100", chips=8, tp=3)] * 2
        alone = [self.outcome(job) for job in jobs[:2] + jobs[-1:]]
        results = [None] * len(jobs)

        def work(i):
            results[i] = self.outcome(jobs[i])
        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(jobs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        self.assertEqual(results, [alone[i % 2] for i in range(6)] + [alone[2]] * 2)
        self.assertIn("tp", alone[2])

    @staticmethod
    def outcome(job):
        try:
            return ridgeline.train(**job)
        except ridgeline.InputError as error:
            return str(error)

    def test_validate(self):
        runs = os.path.join(ROOT, "tests/data/runs/published-runs-dev.json")
        self.check(ridgeline.validate, dict(file=runs, source="narayanan2021_table1"),
                   ["validate", runs, "--source", "narayanan2021_table1"])


class BadInput(unittest.TestCase):
    def test_the_command_lines_message(self):
        _, error = cli("train", "--model", "llama3-70b", "--hardware", "dgx-h100", "--chips", "64", "--tp", "3")
        self.assertIsNotNone(error)
        with self.assertRaises(ridgeline.InputError) as raised:
            ridgeline.train(model="llama3-70b", hardware="dgx-h100", chips=64, tp=3)
        self.assertEqual(str(raised.exception), error)
        _, error = cli("model", "no-such-model")
        with self.assertRaises(ridgeline.InputError) as raised:
            ridgeline.model(model="no-such-model")
        self.assertEqual(str(raised.exception), error)
        with self.assertRaises(ridgeline.InputError):
            ridgeline.calibrate(backend="abacus")

    def test_unknown_keywords_are_type_errors_naming_them(self):
        with self.assertRaises(TypeError) as raised:
            ridgeline.train(model="llama3-70b", hardware="dgx-h100", chips=64, tensor_parallel=8, colour="red")
        self.assertIn("colour, tensor_parallel", str(raised.exception))

    def test_wrong_types_name_the_argument(self):
        for kwargs, name in ((dict(chips={"a": 1}), "chips"), (dict(sp="yes"), "sp"), (dict(chips="many"), "--chips")):
            with self.assertRaises(ridgeline.InputError) as raised:
                ridgeline.train(model="llama3-70b", hardware="dgx-h100", **dict(dict(chips=64), **kwargs))
            self.assertIn(name, str(raised.exception))

    def test_a_file_read_by_one_call_may_take_a_later_calls_result(self):
        # "Never replace an input" is about one command's inputs, not every file the process has read.
        model = os.path.join(ROOT, "models/llama3-8b.json")
        with tempfile.TemporaryDirectory() as folder:
            page = shutil.copy(model, os.path.join(folder, "page.html"))
            ridgeline.model(model=page)
            ridgeline.train(model="llama3-8b", hardware="dgx-h100", chips=8, html=page)
            with open(page) as written:
                self.assertIn("<html", written.read(200).lower())
            mine = shutil.copy(model, os.path.join(folder, "model.json"))
            with self.assertRaises(ridgeline.InputError) as raised:
                ridgeline.train(model=mine, hardware="dgx-h100", chips=8, html=mine)
            self.assertIn("inputs", str(raised.exception))

    def test_docstrings_are_the_help(self):
        self.assertIn("--global-batch-tokens", ridgeline.train.__doc__)
        self.assertIn("--input-len", ridgeline.search_serve.__doc__)


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=1).result
    failed = len(result.failures) + len(result.errors)
    print("%d passed, %d failed" % (result.testsRun - failed, failed))
    sys.exit(1 if failed else 0)
