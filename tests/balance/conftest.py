import pytest

import animik
from animik.balance import RobotModel


@pytest.fixture(scope="session")
def model() -> RobotModel:
    return RobotModel.from_rig(animik.load_rig("wheeled20"))
