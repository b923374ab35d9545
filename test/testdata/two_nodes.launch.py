"""A user's plain ROS 2 launch file: two rclcpp PD controllers, one per
pendulum, each run under tcs through its Node's prefix.

    tcs run two_nodes_attach.yaml          # one shell
    ros2 launch two_nodes.launch.py        # another

Nothing in it is tcs's but the prefix: tcs attach joins the running run as
the client named (attach: true in the scenario) and appends the node's ROS
arguments (use_sim_time, private clock, namespace /<robot>) after the
launch's own. The package tcs_test_nodes holds test/controllers/ros2's
rclcpp_pd (test/ros2_attach_test.go makes that package).
"""

from launch import LaunchDescription
from launch_ros.actions import Node


def generate_launch_description():
    return LaunchDescription([
        Node(
            package='tcs_test_nodes',
            executable='rclcpp_pd',
            name='left_pd',
            parameters=[{'rate': 200.0, 'pattern': 'timer'}],
            prefix='tcs attach --name left_pd --',
            output='screen',
        ),
        Node(
            package='tcs_test_nodes',
            executable='rclcpp_pd',
            name='right_pd',
            parameters=[{'rate': 100.0, 'pattern': 'timer'}],
            prefix='tcs attach --name right_pd --',
            output='screen',
        ),
    ])
