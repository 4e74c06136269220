#!/usr/bin/env python3
"""Checks the JSON Schemas in schemas/ against what Ridgeline reads and writes.

usage: python3 tests/check_schemas.py BINARY SOURCE_DIR

1. every schemas/*.schema.json is a valid draft 2020-12 schema, named after its format id, whose
   references resolve and whose physical ranges are those of schemas/physical-ranges.json;
2. every shipped input file (hardware, models, strategies, stacks, recompute policies, scenarios, run
   records, kernel and calibration measurements, the physical ranges) validates against the schema
   of the format it names ("schema", or the older "format");
3. representative invocations of every command with --json validate against the schema named by
   their "schema" field, as do the files `calibrate` and `fit` write;
4. every format id in src/ has a schema, every schema was exercised, and README.md names every
   report id.

One line per check; exits 1 if any failed. Standard library and python3-jsonschema only (Debian's
4.10 or any later release).
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from urllib.parse import urldefrag, urljoin

try:
    import jsonschema
    from jsonschema import Draft202012Validator
except ImportError:
    print("FAIL python3-jsonschema is not installed (apt-get install python3-jsonschema)")
    sys.exit(1)

DRAFT = "https://json-schema.org/draft/2020-12/schema"
ID_BASE = "https://ridgeline.invalid/schemas/"

# Shipped input files: folder (glob) -> the format every file there must name.
SHIPPED = [
    ("hardware/chips/*.json", "ridgeline.chip/1"),
    ("hardware/systems/*.json", "ridgeline.system/1"),
    ("hardware/topologies/*.json", "ridgeline.topology/1"),
    ("models/*.json", "ridgeline.model-spec/1"),
    ("strategies/*.json", "ridgeline.strategy/1"),
    ("stacks/*.json", "ridgeline.stack/1"),
    ("engines/*.json", "ridgeline.engine/1"),
    ("accuracy/held-out-residuals.json", "ridgeline.residuals/1"),
    ("accuracy/serving-residuals.json", "ridgeline.residuals/1"),
    ("accuracy/fit-policy.json", "ridgeline.fit-policy/1"),
    ("emitters/*.json", "ridgeline.emitter/1"),
    ("recompute/*.json", "ridgeline.recompute-policy/1"),
    ("scenarios/*.json", "ridgeline.scenario/1"),
    ("tests/data/runs/*.json", "ridgeline.run-record/1"),
    ("tests/data/reference/gpu-kernels-h100.json", "ridgeline.kernel-measurements/1"),
    ("tests/data/calibration/*.json", "ridgeline.calibration/1"),
    ("schemas/physical-ranges.json", "ridgeline.physical-ranges/1"),
]

# A small run-record file for validate: these records when present (dense and MoE GPU training, a
# TPU slice, one the engine refuses), else the first few.
RUN_IDS = ["nemo2407-LLAMA3-8B-8gpu", "dgxc-grok1-314b-BF16-8gpu", "maxtext-v5p-32b-1x-v5p-128",
           "moezoo-qwen3-235b-h100-intranode-ep-fsdp"]

LLAMA_JOB = ["--model", "llama3-8b", "--hardware", "dgx-h100", "--global-batch-tokens", "1048576", "--seq-len", "8192"]
SERVE_JOB = ["--model", "llama3-8b", "--hardware", "dgx-h100", "--chips", "1", "--input-len", "1024", "--output-len", "256"]


def invocations(src, tmp):
    """(label, arguments, expected schema id, keys the document must carry): small, fast, and together
    reaching every optional part of every report."""
    topo = os.path.join(src, "hardware/topologies/hypercube-16.json")
    scenario = os.path.join(src, "scenarios/llama3-70b-tpu-v5p-512.json")
    runs = os.path.join(tmp, "runs.json")
    runs_compare = os.path.join(tmp, "runs-compare.json")
    return [
        ("model dense", ["model", "llama3-8b"], "ridgeline.model/1", []),
        ("model moe", ["model", "deepseek-v3", "--seq-len", "4096"], "ridgeline.model/1", ["model.moe"]),
        ("model local attention", ["model", "gemma2-9b"], "ridgeline.model/1", ["model.local_attention", "model.context_length"]),
        ("model hf config", ["model", os.path.join(src, "tests/data/hf/qwen3_moe-config.json")], "ridgeline.model/1", []),
        ("models", ["models"], "ridgeline.model-list/1", []),
        ("hardware", ["hardware"], "ridgeline.hardware-list/1", []),
        ("roofline", ["roofline", "--hardware", "tpu-v5e"], "ridgeline.roofline/1", []),
        ("roofline --set", ["roofline", "--hardware", "h100", "--set", "chip.hbm.bandwidth=4.8TB/s", "--set",
                            "chip.peak.bf16=2PFLOP/s"], "ridgeline.roofline/1", ["overrides"]),
        ("roofline --matmul", ["roofline", "--hardware", "h100", "--matmul", "128,8192,32768"], "ridgeline.roofline-matmul/1", []),
        ("roofline --matmul --price", ["roofline", "--hardware", "tpu-v5e", "--matmul", "128,8192,32768", "--weights-dtype",
                                       "int8", "--price", "1.5"], "ridgeline.roofline-matmul/1", ["overrides"]),
        ("roofline --model decode", ["roofline", "--hardware", "h100", "--model", "mixtral-8x7b", "--phase", "decode",
                                     "--batch", "16", "--seq-len", "4096"], "ridgeline.roofline-layer/1", []),
        ("roofline --model training --set", ["roofline", "--hardware", "tpu-v5e", "--model", "llama3-8b", "--phase", "training",
                                             "--batch", "1", "--seq-len", "2048", "--set", "chip.hbm.bandwidth=1TB/s"],
         "ridgeline.roofline-layer/1", ["overrides"]),
        ("topology nodes", ["topology", "--hardware", "dgx-h100", "--nodes", "4"], "ridgeline.topology-report/1", ["bisection"]),
        ("topology file", ["topology", "--topology", topo], "ridgeline.topology-report/1", ["all_to_all_max_link_load"]),
        ("topology torus --set", ["topology", "--hardware", "tpu-v5p", "--topology", "4x4x8", "--set", "chip.ici.bandwidth=100GB/s"],
         "ridgeline.topology-report/1", ["overrides", "closed_form_diameter_hops"]),
        ("topology beyond the graph", ["topology", "--hardware", "tpu-v5p", "--topology", "16x16x24"],
         "ridgeline.topology-report/1", []),
        ("collective torus", ["collective", "--hardware", "tpu-v5p", "--topology", "4x4x4", "--op", "allgather", "--bytes", "1GiB",
                              "--axes", "x,y"], "ridgeline.collective/1", []),
        ("collective --set", ["collective", "--hardware", "dgx-h100", "--nodes", "4", "--mesh", "data=4,tensor=8", "--op",
                              "allreduce", "--bytes", "1GB", "--axes", "data", "--set", "system.scale_out.bandwidth=100GB/s"],
         "ridgeline.collective/1", ["overrides"]),
        ("train", ["train"] + LLAMA_JOB + ["--chips", "8", "--tp", "8", "--micro-batch", "1"], "ridgeline.train/1", []),
        ("train not fitting", ["train"] + LLAMA_JOB + ["--chips", "8", "--tp", "8", "--micro-batch", "128"], "ridgeline.train/1",
         ["overflow_bytes"]),
        ("train micro-batch chosen", ["train"] + LLAMA_JOB + ["--chips", "8", "--tp", "8"], "ridgeline.train/1",
         ["plan.micro_batch_choice"]),
        ("train --train-tokens", ["train"] + LLAMA_JOB + ["--chips", "64", "--tp", "8", "--micro-batch", "1", "--train-tokens",
                                                          "1e12"], "ridgeline.train/1", ["outlook.goodput", "outlook.energy"]),
        ("train tpu --set --price", ["train", "--model", "llama3-8b", "--hardware", "tpu-v5e", "--chips", "256", "--fsdp", "256",
                                     "--global-batch-tokens", "2097152", "--seq-len", "8192", "--train-tokens", "1e12",
                                     "--set", "chip.hbm.bandwidth=1TB/s", "--price", "1.2"],
         "ridgeline.train/1", ["overrides", "outlook", "cost_usd"]),
        ("train moe", ["train", "--model", "mixtral-8x7b", "--hardware", "dgx-h100", "--chips", "64", "--tp", "8", "--ep", "8",
                       "--global-batch-tokens", "1048576", "--seq-len", "4096", "--micro-batch", "1", "--recompute", "full"],
         "ridgeline.train/1", []),
        ("train --scenario", ["train", "--scenario", scenario], "ridgeline.train/1", ["outlook"]),
        ("serve", ["serve"] + SERVE_JOB + ["--batch", "32"], "ridgeline.serve/1", ["energy", "throughput_interval"]),
        ("serve under load", ["serve"] + SERVE_JOB + ["--concurrency", "8", "--requests", "40", "--slo-ttft-ms", "500"], "ridgeline.serve/1",
         ["load", "throughput_interval.of", "load.intervals.ttft_mean"]),
        ("serve batch range --requests-per-s", ["serve"] + SERVE_JOB + ["--batch", "1..64", "--requests-per-s", "10"],
         "ridgeline.serve/1", ["curve", "disaggregated"]),
        ("serve moe --set", ["serve", "--model", "mixtral-8x7b", "--hardware", "dgx-h100", "--chips", "8", "--tp", "8",
                             "--batch", "16", "--input-len", "1024", "--output-len", "256", "--set", "chip.hbm.bandwidth=4TB/s"],
         "ridgeline.serve/1", ["moe_decode", "overrides"]),
        ("serve speculative", ["serve", "--model", "deepseek-v3", "--hardware", "dgx-h200", "--chips", "8", "--tp", "8",
                               "--batch", "8", "--input-len", "1024", "--output-len", "256", "--draft-tokens", "1",
                               "--acceptance", "0.8", "--weights-dtype", "fp8"], "ridgeline.serve/1", ["decode.speculative"]),
        ("serve fp8 beside bf16 attention", ["serve", "--model", "llama3-405b", "--hardware", "dgx-h100", "--chips", "8", "--tp", "8",
                                             "--input-len", "1024", "--output-len", "256", "--weights-dtype", "fp8",
                                             "--attention-weights-dtype", "bf16"], "ridgeline.serve/1", ["plan.attention_weights_dtype"]),
        ("serve not fitting", ["serve", "--model", "llama3-70b", "--hardware", "dgx-h100", "--chips", "1", "--batch", "64",
                               "--input-len", "4096", "--output-len", "512"], "ridgeline.serve/1", ["overflow"]),
        ("search train", ["search", "train"] + LLAMA_JOB + ["--chips", "8", "--top", "2"], "ridgeline.search-train/1", ["top"]),
        ("search train --set", ["search", "train"] + LLAMA_JOB + ["--chips", "8", "--top", "1", "--set",
                                                                  "chip.hbm.bandwidth=4TB/s"], "ridgeline.search-train/1",
         ["overrides"]),
        ("search train chip range", ["search", "train"] + LLAMA_JOB + ["--chips", "8..32", "--train-tokens", "1e11", "--price",
                                                                       "3"], "ridgeline.search-scaling/1",
         ["overrides", "points"]),
        ("search serve", ["search", "serve", "--model", "llama3-8b", "--hardware", "dgx-h100", "--chips", "1..8", "--input-len",
                          "1024", "--output-len", "256", "--slo-ttft-ms", "500", "--slo-tpot-ms", "50", "--top", "3",
                          "--price", "2"], "ridgeline.serve-search/1", ["best", "overrides"]),
        ("validate serving --cross-validate", ["validate", os.path.join(src, "tests", "data", "runs", "published-serve-records.json"),
                                               "--cross-validate"], "ridgeline.validation/1", ["cross_validation"]),
        ("validate", ["validate", runs], "ridgeline.validation/1", []),
        ("validate --compare-published", ["validate", runs_compare, "--compare-published"], "ridgeline.compare-published/1", []),
    ]


class Checks:
    def __init__(self):
        self.failed = 0
        self.count = 0

    def ok(self, what):
        self.count += 1
        print("ok   " + what)

    def fail(self, what, why=""):
        self.count += 1
        self.failed += 1
        print("FAIL " + what + (": " + why if why else ""))

    @staticmethod
    def note(what):
        print("note " + what)


def format_id_of(filename):
    """ridgeline.train-1.schema.json -> ridgeline.train/1"""
    stem = filename[: -len(".schema.json")]
    head, _, version = stem.rpartition("-")
    return head + "/" + version


def walk(node, path=""):
    """Every (json-pointer, subschema dict) in a schema."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from walk(value, path + "/" + key)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk(value, path + "/" + str(i))


def pointer(document, fragment):
    node = document
    for part in [p for p in fragment.split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def make_validator_factory(schemas):
    """Validators that resolve references between the schema files, on old and new jsonschema alike."""
    try:
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012

        registry = Registry().with_resources(
            [(s["$id"], Resource(contents=s, specification=DRAFT202012)) for s in schemas.values()])
        return lambda schema: Draft202012Validator(schema, registry=registry)
    except ImportError:
        store = {s["$id"]: s for s in schemas.values()}
        return lambda schema: Draft202012Validator(schema, resolver=jsonschema.RefResolver.from_schema(schema, store=store))


def errors_text(validator, document):
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    if not errors:
        return ""
    lines = []
    for error in errors[:3]:
        best = jsonschema.exceptions.best_match([error])
        where = "/".join(str(p) for p in best.absolute_path) or "(root)"
        message = best.message if len(best.message) <= 200 else best.message[:200] + " ..."
        lines.append(where + ": " + message)
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    return "; ".join(lines) + more


def has_path(document, dotted):
    node = document
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def check_schema_files(src, checks):
    schemas = {}
    for path in sorted(glob.glob(os.path.join(src, "schemas", "*.schema.json"))):
        name = os.path.basename(path)
        fid = format_id_of(name)
        try:
            with open(path) as f:
                schema = json.load(f)
            Draft202012Validator.check_schema(schema)
        except (ValueError, jsonschema.exceptions.SchemaError) as e:
            checks.fail("schema " + name, str(e).splitlines()[0])
            continue
        problems = []
        if schema.get("$schema") != DRAFT:
            problems.append("$schema is not " + DRAFT)
        if schema.get("$id") != ID_BASE + name:
            problems.append("$id is not " + ID_BASE + name)
        if not re.fullmatch(r"ridgeline\.[a-z][a-z0-9-]*/[0-9]+", fid):
            problems.append("file name is not <format id>.schema.json")
        if problems:
            checks.fail("schema " + name, "; ".join(problems))
            continue
        schemas[fid] = schema
    by_uri = {s["$id"]: s for s in schemas.values()}
    with open(os.path.join(src, "schemas", "physical-ranges.json")) as f:
        ranges = json.load(f)["ranges"]
    for fid, schema in sorted(schemas.items()):
        name = os.path.basename(schema["$id"])
        problems = []
        for where, node in walk(schema):
            ref = node.get("$ref")
            if isinstance(ref, str):
                uri, fragment = urldefrag(urljoin(schema["$id"], ref))
                try:
                    pointer(by_uri[uri], fragment)
                except (KeyError, IndexError, ValueError):
                    problems.append(f"{where}: $ref {ref} does not resolve")
        # $defs/sourced_<range>: the loaders' physical ranges, which must be physical-ranges.json's.
        for key, definition in schema.get("$defs", {}).items():
            if key.startswith("sourced_") and key[len("sourced_"):] in ranges:
                expected = ranges[key[len("sourced_"):]]
                bare = definition["anyOf"][0]
                if (bare.get("minimum"), bare.get("maximum")) != (expected["min"], expected["max"]):
                    problems.append(f"$defs/{key} is [{bare.get('minimum')}, {bare.get('maximum')}], physical-ranges.json "
                                    f"says [{expected['min']}, {expected['max']}]")
        if problems:
            checks.fail("schema " + name, "; ".join(problems[:3]))
        else:
            checks.ok(f"schema {name} is a valid draft 2020-12 schema for {fid}")
    return schemas


def validate_document(document, label, expected, schemas, validator_for, checks, exercised, expect_keys=()):
    fid = None
    if isinstance(document, dict):
        fid = document.get("schema", document.get("format"))
    if expected and fid != expected:
        checks.fail(label, f"names format {fid!r}, expected {expected}")
        return
    if fid not in schemas:
        checks.fail(label, f"no schema for format {fid!r}")
        return
    exercised.add(fid)
    problems = errors_text(validator_for[fid], document)
    missing = [k for k in expect_keys if not has_path(document, k)]
    if problems:
        checks.fail(f"{label} against {fid}", problems)
    elif missing:
        checks.fail(f"{label} against {fid}", "the invocation should produce " + ", ".join(missing))
    else:
        checks.ok(f"{label} validates against {fid}")


def check_shipped_inputs(src, schemas, validator_for, checks, exercised):
    old_key = []
    for pattern, expected in SHIPPED:
        files = sorted(glob.glob(os.path.join(src, pattern)))
        if not files:
            checks.fail("input " + pattern, "no file found")
        for path in files:
            rel = os.path.relpath(path, src)
            try:
                with open(path) as f:
                    document = json.load(f)
            except ValueError as e:
                checks.fail("input " + rel, "not JSON: " + str(e))
                continue
            if isinstance(document, dict) and "format" in document and "schema" not in document:
                old_key.append(rel)
            validate_document(document, "input " + rel, expected, schemas, validator_for, checks, exercised)
    if old_key:
        checks.note(f"{len(old_key)} input files still name their format under the old key \"format\" (e.g. {old_key[0]})")


def write_run_records(src, tmp):
    with open(os.path.join(src, "tests/data/runs/published-runs-dev.json")) as f:
        records = json.load(f)["records"]
    chosen = [r for r in records if r.get("id") in RUN_IDS] or records[:3]
    serve_path = os.path.join(src, "tests/data/runs/published-serve-records.json")
    serving = []
    if os.path.exists(serve_path):
        with open(serve_path) as f:
            serving = json.load(f)["records"][:2]
    with open(os.path.join(tmp, "runs.json"), "w") as f:
        json.dump({"schema": "ridgeline.run-record/1", "records": chosen + serving}, f)
    # Each compared record searches its whole job: two small ones.
    small = sorted((r for r in chosen if r["kind"] == "train"), key=lambda r: r["hardware"]["count"])[:1]
    tpu = [r for r in chosen if r["hardware"]["accelerator"].startswith("tpu")][:1]
    with open(os.path.join(tmp, "runs-compare.json"), "w") as f:
        json.dump({"schema": "ridgeline.run-record/1", "records": small + [r for r in tpu if r not in small]}, f)


def run(binary, src, arguments, timeout=120):
    return subprocess.run([binary, "--data-dir", src] + arguments, capture_output=True, text=True, timeout=timeout)


def check_commands(binary, src, tmp, schemas, validator_for, checks, exercised):
    write_run_records(src, tmp)
    for label, arguments, expected, expect_keys in invocations(src, tmp):
        label = "ridgeline " + label
        try:
            result = run(binary, src, arguments + ["--json"])
        except subprocess.TimeoutExpired:
            checks.fail(label, "timed out")
            continue
        if result.returncode != 0:
            checks.fail(label, f"exit {result.returncode}: {result.stderr.strip()[-300:]}")
            continue
        try:
            document = json.loads(result.stdout)
        except ValueError as e:
            checks.fail(label, "stdout is not one JSON document: " + str(e))
            continue
        validate_document(document, label, expected, schemas, validator_for, checks, exercised, expect_keys)

    # fit writes chip descriptions: from kernel measurements (--like) and from a calibration file.
    fits = [("fit kernel measurements --like h100-sxm",
             [os.path.join(src, "tests/data/reference/gpu-kernels-h100.json"), "--like", "h100-sxm"])]
    calibration = sorted(glob.glob(os.path.join(src, "tests/data/calibration/*.json")))
    if calibration:
        fits.append(("fit calibration measurements", [calibration[0]]))
    for i, (label, arguments) in enumerate(fits):
        out = os.path.join(tmp, f"fitted-{i}.json")
        result = run(binary, src, ["fit"] + arguments + ["-o", out])
        if result.returncode != 0:
            checks.fail("ridgeline " + label, f"exit {result.returncode}: {result.stderr.strip()[-300:]}")
            continue
        with open(out) as f:
            validate_document(json.load(f), "ridgeline " + label + ": the chip written", "ridgeline.chip/1", schemas,
                              validator_for, checks, exercised)

    # calibrate --validate measures this host for a few seconds: the measurements, the fitted chip and the report.
    out = os.path.join(tmp, "calibration.json")
    label = "ridgeline calibrate --validate"
    result = run(binary, src, ["calibrate", "--backend", "cpu", "--devices", "1", "--time-budget", "4", "--validate",
                               "--quiet", "--json", "-o", out], timeout=180)
    if result.returncode != 0 and re.search(r"needed|budget|held-out", result.stderr):
        checks.note(f"{label}: this host measured too little in the time budget ({result.stderr.strip()[-160:]}); "
                    "its report is not checked")
        if os.path.exists(out):
            with open(out) as f:
                validate_document(json.load(f), label + ": measurements written", "ridgeline.calibration/1", schemas,
                                  validator_for, checks, exercised)
        exercised.add("ridgeline.calibration-validation/1")
        return
    if result.returncode != 0:
        checks.fail(label, f"exit {result.returncode}: {result.stderr.strip()[-300:]}")
        return
    try:
        validate_document(json.loads(result.stdout), label, "ridgeline.calibration-validation/1", schemas, validator_for,
                          checks, exercised)
    except ValueError as e:
        checks.fail(label, "stdout is not one JSON document: " + str(e))
    for path, expected, what in [(out, "ridgeline.calibration/1", "measurements written"),
                                 (os.path.join(tmp, "calibration.chip.json"), "ridgeline.chip/1", "chip written")]:
        with open(path) as f:
            validate_document(json.load(f), f"{label}: {what}", expected, schemas, validator_for, checks, exercised)


def format_ids_in_sources(src):
    ids = set()
    for path in glob.glob(os.path.join(src, "src", "**", "*.[ch]pp"), recursive=True):
        with open(path, errors="replace") as f:
            ids.update(re.findall(r"ridgeline\.[a-z][a-z0-9-]*/[0-9]+", f.read()))
    return ids


def is_input_schema(schema):
    return "format" in schema.get("properties", {})


def check_coverage(src, schemas, exercised, checks):
    missing = sorted(format_ids_in_sources(src) - set(schemas))
    if missing:
        checks.fail("every format id in src/ has a schema", "no schema for " + ", ".join(missing))
    else:
        checks.ok("every format id in src/ has a schema")
    unused = sorted(set(schemas) - exercised)
    if unused:
        checks.fail("every schema validated a shipped file or a command's output", "never used: " + ", ".join(unused))
    else:
        checks.ok("every schema validated a shipped file or a command's output")
    with open(os.path.join(src, "README.md")) as f:
        readme = f.read()
    reports = sorted(fid for fid, s in schemas.items() if not is_input_schema(s))
    absent = [fid for fid in reports if "`" + fid + "`" not in readme]
    if absent:
        checks.fail("README.md names every report id", "missing " + ", ".join(absent))
    else:
        checks.ok(f"README.md names every report id ({len(reports)})")
    inputs_absent = [fid for fid, s in sorted(schemas.items()) if is_input_schema(s) and fid not in readme]
    if inputs_absent:
        checks.note("input formats README.md does not name: " + ", ".join(inputs_absent))


def jsonschema_version():
    try:
        from importlib.metadata import version
        return version("jsonschema")
    except Exception:  # an unpackaged copy
        return "?"


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2])
        return 2
    binary, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    started = time.monotonic()
    checks = Checks()
    schemas = check_schema_files(src, checks)
    factory = make_validator_factory(schemas)
    validator_for = {fid: factory(schema) for fid, schema in schemas.items()}
    exercised = set()
    check_shipped_inputs(src, schemas, validator_for, checks, exercised)
    if not os.access(binary, os.X_OK):
        checks.fail("ridgeline binary", binary + " is not an executable")
    else:
        with tempfile.TemporaryDirectory(prefix="ridgeline_schemas_") as tmp:
            check_commands(binary, src, tmp, schemas, validator_for, checks, exercised)
    check_coverage(src, schemas, exercised, checks)
    print(f"{checks.count - checks.failed} of {checks.count} checks passed in {time.monotonic() - started:.1f} s "
          f"(python {sys.version.split()[0]}, jsonschema {jsonschema_version()})")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
