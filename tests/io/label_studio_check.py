"""Run by Label Studio's own Python (the SDK's environment, see tests/io/test_label_studio.py), not by pytest.

    label_studio_check.py CONFIG.xml TASKS.json

Parses the labeling config with the SDK's LabelInterface and validates it, checks that every task carries the
data the config's objects name, validates every annotation and prediction against the config, and converts the
tasks with the SDK's converter to JSON_MIN. Prints one JSON object: {"errors": [...], "min": [...]}.
"""

import json
import sys
import tempfile
from pathlib import Path

from label_studio_sdk.converter import Converter
from label_studio_sdk.label_interface import LabelInterface

config = Path(sys.argv[1]).read_text(encoding="utf-8")
tasks_path = sys.argv[2]
tasks = json.loads(Path(tasks_path).read_text(encoding="utf-8"))
interface = LabelInterface(config)
interface.validate()
errors = []
for task in tasks:
    for obj in interface.objects:
        if obj.value_is_variable and task["data"].get(obj.value_name) is None:
            errors.append(f"task {task['id']}: no data {obj.value_name!r}")
    for kind in ("annotations", "predictions"):
        for entry in task.get(kind, []):
            for e in interface.validate_prediction(entry, return_errors=True):
                errors.append(f"task {task['id']} {kind}: {e}")
out = tempfile.mkdtemp()
Converter(config=config, project_dir=None, download_resources=False).convert(tasks_path, out, "JSON_MIN",
                                                                            is_dir=False)
converted = json.loads((Path(out) / "result.json").read_text(encoding="utf-8"))
print(json.dumps({"errors": errors, "controls": sorted(c.name for c in interface.controls), "min": converted}))
