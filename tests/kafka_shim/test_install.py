"""`pip install` of kafka-shim into someone else's project: the wheel and the site-packages it
fills hold only `kafka_shim`, and a project with its own `storage`, `protocol` and `pipeline`
packages runs its own tests and a test on the `kafka_shim` fixture in one pytest run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[2]
DIST_INFO = "kafka_shim-0.1.0.dist-info"


def run(argv: list[str | Path], cwd: Path, timeout_s: float = 300) -> str:
    # No PYTHONPATH: what is imported must come from the venv and the machine's site-packages.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s
    )
    assert result.returncode == 0, f"{argv} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def clone_working_tree(target: Path) -> Path:
    """The files a clone would hold (tracked, or new and not ignored), as they are on disk."""
    listed = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], REPO_ROOT)
    for name in sorted(set(filter(None, listed.split("\0")))):
        source, copy = REPO_ROOT / name, target / name
        if not source.exists():
            continue  # deleted in the working tree, not yet committed
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, copy)
    return target


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = clone_working_tree(tmp_path_factory.mktemp("clone"))
    dist = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", dist, source], source)
    (built,) = dist.glob("kafka_shim-*.whl")
    return built


@pytest.fixture(scope="module")
def venv_python(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv whose own site-packages holds only the wheel: dependencies (trio, construct,
    pytest, the Kafka clients) come from the machine's through --system-site-packages."""
    venv = tmp_path_factory.mktemp("venv")
    run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv], venv)
    python = venv / "bin" / "python"
    # The machine's pip, run by the venv's python, installs into the venv; --ignore-installed
    # because the machine may have kafka-shim installed too (CI installs it editable).
    run(
        [python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--ignore-installed", wheel],
        venv,
    )
    return python


def test_the_wheel_holds_only_kafka_shim(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        entry_points = archive.read(f"{DIST_INFO}/entry_points.txt").decode()
    assert {name.split("/")[0] for name in names} == {"kafka_shim", DIST_INFO}
    assert "kafka_shim/pytest_plugin.py" in names
    assert "kafka_shim/shim/server.py" in names
    assert "[pytest11]\nkafka_shim = kafka_shim.pytest_plugin\n" in entry_points


def test_a_project_with_its_own_storage_protocol_pipeline_tests_with_the_fixture(
    venv_python: Path, tmp_path: Path
) -> None:
    site_packages = Path(
        run([venv_python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp_path).strip()
    )
    assert sorted(os.listdir(site_packages)) == ["kafka_shim", DIST_INFO]

    project = tmp_path / "project"
    for package in ("storage", "protocol", "pipeline"):
        (project / package).mkdir(parents=True)
        (project / package / "__init__.py").write_text(f'OWNER = "my-project {package}"\n')
    (project / "pytest.ini").write_text("[pytest]\nkafka_shim_config = num.partitions=2\n")
    (project / "tests").mkdir()
    (project / "tests" / "test_own.py").write_text(
        textwrap.dedent(
            """
            import pipeline, protocol, storage

            def test_my_packages_are_mine():
                assert [storage.OWNER, protocol.OWNER, pipeline.OWNER] == [
                    "my-project storage", "my-project protocol", "my-project pipeline"
                ]
            """
        )
    )
    (project / "tests" / "test_with_kafka.py").write_text(
        textwrap.dedent(
            """
            import sys
            import time
            from confluent_kafka import Consumer, Producer

            def test_the_plugin_came_from_the_installed_wheel(request):
                plugin = request.config.pluginmanager.get_plugin("kafka_shim")
                assert plugin.__file__.startswith(sys.prefix), plugin.__file__

            def test_a_consumer_against_the_fixture(kafka_shim):
                kafka_shim.create_topic("orders", partitions=1)  # the ini's default is 2
                producer = Producer({"bootstrap.servers": kafka_shim.bootstrap})
                producer.produce("orders", b"first order")
                assert producer.flush(10) == 0
                consumer = Consumer({
                    "bootstrap.servers": kafka_shim.bootstrap, "group.id": "shop",
                    "auto.offset.reset": "earliest", "enable.auto.commit": False,
                })
                consumer.subscribe(["orders"])
                try:
                    deadline = time.monotonic() + 30
                    message = None
                    while message is None and time.monotonic() < deadline:
                        message = consumer.poll(0.5)
                    assert message is not None and message.error() is None
                    assert message.value() == b"first order"
                    consumer.commit(message, asynchronous=False)
                finally:
                    consumer.close()
                assert kafka_shim.committed("shop") == {("orders", 0): 1}

            def test_the_ini_option_reaches_the_broker(kafka_shim):
                assert kafka_shim.broker.config.num_partitions == 2
            """
        )
    )
    output = run([venv_python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore"], project)
    assert "4 passed" in output, output
