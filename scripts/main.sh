#!/usr/bin/env bash
# Set up (scripts/setup.sh), then the main job: optimise every KernelBench kernel on the emulator
# device with the offline search agent, timed at each problem's bench shape by the model for MI308X (the
# GPU of the KernelBench results it is compared with), as a resumable Prefect flow run, and print the report.
# Re-running resumes: finished stages are cache hits. Results: $ASMEVO_HOME/runs/$RUN_ID/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export ASMEVO_HOME="${ASMEVO_HOME:-$PWD/.asmevo}"
export LITELLM_LOCAL_MODEL_COST_MAP=True PREFECT_SERVER_ANALYTICS_ENABLED=false
RUN_ID="${ASMEVO_RUN_ID:-kernelbench-search}"
status=0
.venv/bin/asmevo suite run kernelbench --agent search --budget "${ASMEVO_BUDGET:-16}" --gpu mi308x --run-id "$RUN_ID" || status=$?
.venv/bin/asmevo report "$RUN_ID" --format md
echo "report files: $ASMEVO_HOME/runs/$RUN_ID/report.{md,csv,html}"
exit "$status"
