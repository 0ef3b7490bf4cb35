"""Fixtures of the balance tests (not a conftest.py: tests/conftest.py is imported by name).

Test modules import the fixture (``from balance_helpers import model``).
"""

import pytest

import animik
from animik.balance import RobotModel


@pytest.fixture(scope="session")
def model() -> RobotModel:
    return RobotModel.from_rig(animik.load_rig("wheeled20"))
