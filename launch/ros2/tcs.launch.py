"""Run a tcs scenario whose ROS 2 clients tcs starts itself (ros.transport: ros2).

    ros2 launch launch/ros2/tcs.launch.py scenario:=/abs/path/scenario.yaml [out:=DIR]

tcs publishes /clock, the robots' sensor topics and /diagnostics, and starts
every client with --ros-args -p use_sim_time:=true -r __node:=<client>
-r __ns:=/<robot> -r /clock:=/tcs/<client>/clock. tcs must be on PATH, built
with the ros2 tag (go build -tags ros2 ./cmd/tcs). Not run on a ROS 2
installation yet: see the README.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess
from launch.substitutions import LaunchConfiguration


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument('scenario', description='absolute path of the scenario file'),
        DeclareLaunchArgument('out', default_value='out/tcs', description='output folder'),
        ExecuteProcess(
            cmd=['tcs', 'run', LaunchConfiguration('scenario'), '--out', LaunchConfiguration('out'), '--quiet'],
            output='screen',
        ),
    ])
