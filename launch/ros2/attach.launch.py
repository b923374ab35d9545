"""Run existing ROS 2 nodes as clients of a tcs scenario through `tcs attach`.

    ros2 launch launch/ros2/attach.launch.py scenario:=/abs/path/scenario.yaml \
        package:=my_pkg executable:=my_controller client:=pd

The scenario names the client with `attach: true` (and ros.transport: ros2).
tcs run starts first; the node is launched with prefix='tcs attach --name
<client> --', so it registers with the run, is gated and gets its ROS
arguments (use_sim_time, private clock, namespace) appended after the
launch's own. The attach socket is $TCS_ATTACH_SOCKET (default
/run/tcs/attach/attach.sock). tcs must be on PATH, built with the ros2 tag. Not run
on a ROS 2 installation yet: see the README.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, ExecuteProcess
from launch.substitutions import LaunchConfiguration, PythonExpression
from launch_ros.actions import Node


def generate_launch_description():
    client = LaunchConfiguration('client')
    return LaunchDescription([
        DeclareLaunchArgument('scenario', description='absolute path of the scenario file'),
        DeclareLaunchArgument('out', default_value='out/tcs', description='output folder'),
        DeclareLaunchArgument('package', description="the node's package"),
        DeclareLaunchArgument('executable', description="the node's executable"),
        DeclareLaunchArgument('client', description='the client name in the scenario (attach: true)'),
        ExecuteProcess(
            cmd=['tcs', 'run', LaunchConfiguration('scenario'), '--out', LaunchConfiguration('out'), '--quiet'],
            output='screen',
        ),
        Node(
            package=LaunchConfiguration('package'),
            executable=LaunchConfiguration('executable'),
            name=client,
            parameters=[{'use_sim_time': True}],
            prefix=PythonExpression(["'tcs attach --name ' + '", client, "' + ' --'"]),
            output='screen',
        ),
    ])
