"""One thin, content-cached Prefect task per pipeline stage, each in its own module
(`tasks.recover`, `tasks.verify`, ...; see `policy.stage`). Importing this package first points
Prefect at the current ASMEVO_HOME."""
from artifacts import configure_prefect

configure_prefect()
