package layout

// The names of the topics tcs owns, the same for every transport (ROS
// names; bridge/ros2 writes them as DDS topics with the "rt" prefix).
// Clients are started with their /clock remapped to ClockTopic and with
// each relayed topic remapped to the topic the bridge hands it on, so
// these names are also what the clients' command lines carry.

// ClockTopic is client's private clock topic: its own progress, published
// when it is dispatched (rosgraph_msgs/Clock).
func ClockTopic(client string) string { return "/tcs/" + client + "/clock" }

// SensorTopic is robot's sensor topic (sensor_msgs/JointState).
func SensorTopic(robot string) string { return "/" + robot + "/joint_states" }

// WorldSensorTopic is the topic of a world sensor of robot
// (sensor.Sensor.Name): sensor_msgs/Imu, Range or
// geometry_msgs/WrenchStamped.
func WorldSensorTopic(robot, name string) string { return "/" + robot + "/" + name }

// CommandTopic is robot's actuator topic (std_msgs/Float64, or
// std_msgs/Float64MultiArray for a body with more than one command value).
func CommandTopic(robot string) string { return "/" + robot + "/command" }

// RelayTopic is the one topic on which every receiving client reads the
// relayed topic: a transport that delivers to each subscriber connection
// apart (ROS 1's TCPROS, one socket per subscriber) gates each receiver
// on the same topic.
func RelayTopic(topic string) string { return "/tcs/relay" + topic }

// ClientRelayTopic is the topic on which client alone reads the relayed
// topic: a transport whose writer delivers to all its matched readers at
// once (DDS) needs one writer, hence one topic, per receiver to hand each
// the message when its own progress reaches the publish time.
func ClientRelayTopic(client, topic string) string { return "/tcs/" + client + "/relay" + topic }
