"""`gpuadvisor schema estimate|recommend|answers`: the JSON Schema of each machine-readable output."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

SCHEMAS = ("estimate", "recommend", "answers", "lifecycle")


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("which", choices=SCHEMAS, help="estimate (--json of estimate), recommend (--format json of "
                                                        "recommend and JSON reports, lifecycles included), answers "
                                                        "(the answers file), lifecycle (an answers file with "
                                                        "[[phase]] tables)")


def schema_of(which: str) -> dict[str, Any]:
    if which == "estimate":
        from gpuadvisor.rules.estimate.result import EstimateResult

        model: Any = EstimateResult
    elif which == "recommend":
        from gpuadvisor.rules.consultation.result import RecommendResult

        model = RecommendResult
    elif which == "lifecycle":
        from gpuadvisor.rules.lifecycle.answers import lifecycle_file_model

        model = lifecycle_file_model()
    else:
        from gpuadvisor.rules.inputs.answers import Answers

        model = Answers
    schema: dict[str, Any] = model.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return schema


def run(args: argparse.Namespace) -> int:
    json.dump(schema_of(args.which), sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")
    return 0
