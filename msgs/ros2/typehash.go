package ros2

import (
	"bytes"
	"encoding/hex"
	"strings"
)

// Type names of the services and actions tcs serves (simulation_interfaces)
// and of the action protocol's own types (action_msgs). A service's
// request and response are messages of their own: pkg/srv/S_Request and
// pkg/srv/S_Response.
const (
	GetSimulatorFeatures = "simulation_interfaces/srv/GetSimulatorFeatures"
	GetSimulationState   = "simulation_interfaces/srv/GetSimulationState"
	SetSimulationState   = "simulation_interfaces/srv/SetSimulationState"
	StepSimulation       = "simulation_interfaces/srv/StepSimulation"
	ResetSimulation      = "simulation_interfaces/srv/ResetSimulation"
	// SimulateSteps is an action: its goal, result and cancel services are
	// SimulateStepsSendGoal, SimulateStepsGetResult and CancelGoal, its
	// topics carry SimulateStepsFeedback and GoalStatusArray.
	SimulateSteps          = "simulation_interfaces/action/SimulateSteps"
	SimulateStepsSendGoal  = SimulateSteps + "_SendGoal"
	SimulateStepsGetResult = SimulateSteps + "_GetResult"
	SimulateStepsFeedback  = SimulateSteps + "_FeedbackMessage"
	CancelGoal             = "action_msgs/srv/CancelGoal"
	GoalStatusArray        = "action_msgs/msg/GoalStatusArray"
)

// Request is the message type of service srv's request.
func Request(srv string) string { return srv + "_Request" }

// Response is the message type of service srv's response.
func Response(srv string) string { return srv + "_Response" }

// typeHashes are the RIHS01 hashes (rosidl's type description hash,
// version 1) of the types tcs writes or reads, as Jazzy's rosidl generates
// them into share/<pkg>/<msg|srv|action>/<Name>.json; TestTypeHashes
// checks them against an installed ROS 2.
var typeHashes = map[string]string{
	Clock:                   "RIHS01_692f7a66e93a3c83e71765d033b60349ba68023a8c689a79e48078bcb5c58564",
	Float64:                 "RIHS01_705ba9c3d1a09df43737eb67095534de36fd426c0587779bda2bc51fe790182a",
	Float64MultiArray:       "RIHS01_1025ddc6b9552d191f89ef1a8d2f60f3d373e28b283d8891ddcc974e8c55397f",
	JointState:              "RIHS01_a13ee3a330e346c9d87b5aa18d24e11690752bd33a0350f11c5882bc9179260e",
	LaserScan:               "RIHS01_64c191398013af96509d518dac71d5164f9382553fce5c1f8cca5be7924bd828",
	Twist:                   "RIHS01_9c45bf16fe0983d80e3cfe750d6835843d265a9a6c46bd2e609fcddde6fb8d2a",
	Odometry:                "RIHS01_3cc97dc7fb7502f8714462c526d369e35b603cfc34d946e3f2eda2766dfec6e0",
	DiagnosticArray:         "RIHS01_5a8a36efb05fb25070fa0fb3810290c0e6cd4862b54a8fb975a1ee8dc55a333e",
	DiagnosticStatus:        "RIHS01_b0e3e692ea2d54a8af2f4ef1930e81556a2db55216b771f8a7d2724ed47bf0e4",
	ParticipantEntitiesInfo: "RIHS01_91a0593bacdcc50ea9bdcf849a938b128412cc1ea821245c663bcd26f83c295e",
	Imu:                     "RIHS01_7d9a00ff131080897a5ec7e26e315954b8eae3353c3f995c55faf71574000b5b",
	WrenchStamped:           "RIHS01_8dc3deaf06b2ab281f9f9a742a8961c328ca7cec16e3fd6586d3a5c83fa78f77",
	Range:                   "RIHS01_b42b62562e93cbfe9d42b82fe5994dfa3d63d7d5c90a317981703f7388adff3a",

	Request(GetSimulatorFeatures):    "RIHS01_982b8c1adef1d556f6ecdc019d1269fc39413626a9222d73b4fc874bd798b7db",
	Response(GetSimulatorFeatures):   "RIHS01_ede4dc8227cbb2f86a24612c999dcaa67d17dab21dab566cefdc233e7a2a65d1",
	Request(GetSimulationState):      "RIHS01_c6d65bc5c0a95ca2886bc57f146f803e01722c84ddb5acd5f32a4417f55eecfb",
	Response(GetSimulationState):     "RIHS01_dc80ce852a5ab04c2b23cdd47910cee1bcc46e0f1931cac85825e6916b15517f",
	Request(SetSimulationState):      "RIHS01_73283477d36ba619db2ac37a3e599077ca244502c9d8ca2a7183afcb2224f476",
	Response(SetSimulationState):     "RIHS01_6351aebf2bbf06e2993977918b944240f7403b532a9e4a344c53e71a56afd174",
	Request(StepSimulation):          "RIHS01_cda33f6887815f3dce0f90e61fd8efd39bda13ae264ddede15c33fbad890630e",
	Response(StepSimulation):         "RIHS01_5b4acf2d0ce7c3fc125d0bef2acb9b5a81377e80db6b696b81beeffb9824fb5c",
	Request(ResetSimulation):         "RIHS01_2c766d09c3aa30f01fadc55a42fd760b63db358c7d1d3b6a64ea9978225ffbc7",
	Response(ResetSimulation):        "RIHS01_718428121e0f1755720878d3c28f1688da7581ee5a5d56d26d10d941a28a50a0",
	Request(SimulateStepsSendGoal):   "RIHS01_275e6fd2fafc5d33dcdc83bdea6de5cf29f30b9df74a3b9514a8c5d501fd0fe3",
	Response(SimulateStepsSendGoal):  "RIHS01_755f44a68d1e8d116f50dfed7ab30a140137fb71ad59eca4851d55abe2b3d4c2",
	Request(SimulateStepsGetResult):  "RIHS01_4591b0bfbcb881003bbd46a2acebcaddceb977e5352905218688ce5ed051fdeb",
	Response(SimulateStepsGetResult): "RIHS01_5658172e771cb145a986a8ef4c2b80b5407b741038453b8539e35bed5ff23207",
	SimulateStepsFeedback:            "RIHS01_a30dee7ee7380769e616406ec5067b238aa2b27e1dbd7a5957fba1d908d7754d",
	Request(CancelGoal):              "RIHS01_3d3c84653c1f96918086887e1dcb236faec88b81a5b14fd4cf4840065bcdf8af",
	Response(CancelGoal):             "RIHS01_35e682cf3f510e83c70a82a4aac888496dedee56773bf9d8e5e0aa81f9e1c960",
	GoalStatusArray:                  "RIHS01_6c1684b00f177d37438febe6e709fc4e2b0d4248dca4854946f9ed8b30cda83e",
}

// TypeHash returns the RIHS01 hash of ROS 2 type rosType ("RIHS01_" and
// 64 hex digits), or "" when tcs does not know the type.
func TypeHash(rosType string) string { return typeHashes[rosType] }

// TypeHashes lists the types TypeHash knows.
func TypeHashes() []string {
	out := make([]string, 0, len(typeHashes))
	for t := range typeHashes {
		out = append(out, t)
	}
	return out
}

// ValidTypeHash reports whether h is a RIHS01 hash as ROS 2 writes it.
func ValidTypeHash(h string) bool {
	hexPart, ok := strings.CutPrefix(h, "RIHS01_")
	if !ok || len(hexPart) != 64 || strings.ToLower(hexPart) != hexPart {
		return false
	}
	_, err := hex.DecodeString(hexPart)
	return err == nil
}

// UserDataTypeHash is the USER_DATA entry that carries a type hash on a
// writer or reader from Iron on, as rmw_dds_common encodes it:
// "typehash=RIHS01_<hex>;". It is "" for an empty or invalid hash.
func UserDataTypeHash(h string) string {
	if !ValidTypeHash(h) {
		return ""
	}
	return "typehash=" + h + ";"
}

// UserDataValue returns the value of key in USER_DATA ud, which ROS 2
// writes as "key=value;key=value;" ("" when absent).
func UserDataValue(ud []byte, key string) string {
	for len(ud) > 0 {
		var kv []byte
		if i := bytes.IndexByte(ud, ';'); i >= 0 {
			kv, ud = ud[:i], ud[i+1:]
		} else {
			kv, ud = ud, nil
		}
		if k, v, ok := bytes.Cut(kv, []byte{'='}); ok && string(k) == key {
			return string(v)
		}
	}
	return ""
}

// TypeHashOf returns the valid type hash in USER_DATA ud, or "".
func TypeHashOf(ud []byte) string {
	if h := UserDataValue(ud, "typehash"); ValidTypeHash(h) {
		return h
	}
	return ""
}
