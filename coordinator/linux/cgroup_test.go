package linux

import "testing"

func TestParseCgroupMounts(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       CgroupMounts
	}{
		{"hybrid: v1 controllers, v2 unified", `25 18 0:22 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
26 25 0:23 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:5 - cgroup2 cgroup2 rw,nsdelegate
28 25 0:25 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct
29 25 0:26 / /sys/fs/cgroup/cpuset rw,relatime shared:10 - cgroup cgroup rw,cpuset
`, CgroupMounts{V2: "/sys/fs/cgroup/unified", CpusetV1: "/sys/fs/cgroup/cpuset"}},
		{"pure v2", `30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
`, CgroupMounts{V2: "/sys/fs/cgroup"}},
		{"cpuset named in the mount point only", `29 25 0:26 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuacct
`, CgroupMounts{}},
		{"escaped space, optional fields", `29 25 0:26 / /mnt/my\040cg rw shared:1 master:2 - cgroup none rw,cpuset,clone_children
`, CgroupMounts{CpusetV1: "/mnt/my cg"}},
		{"first of each wins", `1 0 0:1 / /a rw - cgroup2 cgroup2 rw
2 0 0:2 / /b rw - cgroup2 cgroup2 rw
`, CgroupMounts{V2: "/a"}},
		{"garbage", "no separator here\n - \n1 2 3 - cgroup2\n\\\n", CgroupMounts{}},
	} {
		if got := ParseCgroupMounts([]byte(tc.text)); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestRunCgroupName(t *testing.T) {
	if pid, ok := ParseRunCgroupName(RunCgroupName(4242)); !ok || pid != 4242 {
		t.Errorf("round trip of 4242: %d %v", pid, ok)
	}
	for _, bad := range []string{"tcs-", "tcs-0", "tcs--1", "tcs-01", "tcs-12a", "tcs.12", "user.slice", "tcs-99999999999999999999"} {
		if pid, ok := ParseRunCgroupName(bad); ok {
			t.Errorf("%q read as the cgroup of pid %d", bad, pid)
		}
	}
}
