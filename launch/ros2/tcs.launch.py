"""Run a tcs scenario whose ROS 2 clients tcs starts itself (ros.transport: ros2).

    ros2 launch launch/ros2/tcs.launch.py scenario:=/abs/path/scenario.yaml \
        [out:=DIR] [tcs:=/abs/path/bin/tcs]

tcs publishes /clock, the robots' sensor topics and /diagnostics, and starts
every client with --ros-args -p use_sim_time:=true -r __node:=<client>
-r __ns:=/<robot> -r /clock:=/tcs/<client>/clock. The tcs executable
(argument tcs, default $TCS_BIN, else the tcs on PATH) must be built with
the ros2 tag (go build -tags ros2 -o bin/tcs ./cmd/tcs). The launch shuts
down when the run ends (its duration, an error, or Ctrl-C, which stops the
run cleanly), with whatever else an including launch file started.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, Shutdown
from launch.substitutions import EnvironmentVariable, LaunchConfiguration


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument('scenario', description='absolute path of the scenario file'),
        DeclareLaunchArgument('out', default_value='out/tcs', description='output folder'),
        DeclareLaunchArgument('tcs', default_value=EnvironmentVariable('TCS_BIN', default_value='tcs'),
                              description='the tcs executable (built with -tags ros2); default $TCS_BIN, else tcs on PATH'),
        ExecuteProcess(
            cmd=[LaunchConfiguration('tcs'), 'run', LaunchConfiguration('scenario'),
                 '--out', LaunchConfiguration('out'), '--quiet'],
            output='screen',
            on_exit=Shutdown(reason='the tcs run ended'),
        ),
    ])
