"""Run an existing ROS 2 node as a client of a tcs scenario through `tcs attach`.

    ros2 launch launch/ros2/attach.launch.py scenario:=/abs/path/scenario.yaml \
        package:=my_pkg executable:=my_controller client:=pd \
        [out:=DIR] [tcs:=/abs/path/bin/tcs]

The scenario names the client with `attach: true` (and ros.transport: ros2).
The launch starts tcs run and the node, with prefix='<tcs> attach --name
<client> --': the node registers with the run, is gated and gets its ROS
arguments (use_sim_time, private clock, namespace /<robot>) appended after
the launch's own. The attach socket is $TCS_ATTACH_SOCKET (default
/run/tcs/attach/attach.sock). The tcs executable (argument tcs, default
$TCS_BIN, else the tcs on PATH) must be built with the ros2 tag. The
launch shuts down when the run ends.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess, Shutdown
from launch.substitutions import EnvironmentVariable, LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    tcs = LaunchConfiguration('tcs')
    client = LaunchConfiguration('client')
    return LaunchDescription([
        DeclareLaunchArgument('scenario', description='absolute path of the scenario file'),
        DeclareLaunchArgument('out', default_value='out/tcs', description='output folder'),
        DeclareLaunchArgument('package', description="the node's package"),
        DeclareLaunchArgument('executable', description="the node's executable"),
        DeclareLaunchArgument('client', description='the client name in the scenario (attach: true)'),
        DeclareLaunchArgument('tcs', default_value=EnvironmentVariable('TCS_BIN', default_value='tcs'),
                              description='the tcs executable (built with -tags ros2); default $TCS_BIN, else tcs on PATH'),
        ExecuteProcess(
            cmd=[tcs, 'run', LaunchConfiguration('scenario'), '--out', LaunchConfiguration('out'), '--quiet'],
            output='screen',
            on_exit=Shutdown(reason='the tcs run ended'),
        ),
        Node(
            package=LaunchConfiguration('package'),
            executable=LaunchConfiguration('executable'),
            name=client,
            parameters=[{'use_sim_time': True}],
            # launch_ros splits the prefix with shlex: a tcs path with
            # spaces needs quoting.
            prefix=[tcs, ' attach --name ', client, ' --'],
            output='screen',
        ),
    ])
