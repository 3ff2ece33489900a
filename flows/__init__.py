"""Prefect flows: `optimize_kernel`, `run_suite` and the run reports. Importing this package points
Prefect at the current ASMEVO_HOME first (see `artifacts.configure_prefect`)."""
from artifacts import configure_prefect

configure_prefect()
