package driver

import (
	"os/user"
	"strings"
	"testing"

	"github.com/tcs-robotics/tcs/coordinator/linux"
)

// fakeUsers is a user database of root, alice and nobody.
var fakeUsers = func() UserLookup {
	db := []*user.User{
		{Uid: "0", Gid: "0", Username: "root", HomeDir: "/root"},
		{Uid: "1000", Gid: "1000", Username: "alice", HomeDir: "/home/alice"},
		{Uid: "65534", Gid: "65534", Username: "nobody", HomeDir: "/nonexistent"},
	}
	find := func(match func(*user.User) bool, unknown error) (*user.User, error) {
		for _, u := range db {
			if match(u) {
				return u, nil
			}
		}
		return nil, unknown
	}
	return UserLookup{
		ByName: func(s string) (*user.User, error) {
			return find(func(u *user.User) bool { return u.Username == s }, user.UnknownUserError(s))
		},
		ByID: func(s string) (*user.User, error) {
			return find(func(u *user.User) bool { return u.Uid == s }, user.UnknownUserIdError(0))
		},
	}
}()

func TestResolveClientUser(t *testing.T) {
	for _, tc := range []struct {
		name     string
		named    string
		invoker  linux.Cred
		want     ClientUser
		wantNote bool
		wantErr  string
	}{
		{name: "sudo alice", invoker: linux.Cred{Uid: 1000, Gid: 1000},
			want: ClientUser{Uid: 1000, Gid: 1000, Name: "alice", Home: "/home/alice"}},
		{name: "sudo with another group kept", invoker: linux.Cred{Uid: 1000, Gid: 27},
			want: ClientUser{Uid: 1000, Gid: 27, Name: "alice", Home: "/home/alice"}},
		{name: "plain root: unprivileged root, noted", invoker: linux.Cred{Uid: 0, Gid: 0},
			want: ClientUser{Uid: 0, Gid: 0, Name: "root", Home: "/root"}, wantNote: true},
		{name: "uid without an entry", invoker: linux.Cred{Uid: 4242, Gid: 4242},
			want: ClientUser{Uid: 4242, Gid: 4242}},
		{name: "named user", named: "nobody", invoker: linux.Cred{Uid: 0},
			want: ClientUser{Uid: 65534, Gid: 65534, Name: "nobody", Home: "/nonexistent"}},
		{name: "named by uid", named: "1000", invoker: linux.Cred{Uid: 0},
			want: ClientUser{Uid: 1000, Gid: 1000, Name: "alice", Home: "/home/alice"}},
		{name: "named root keeps its privileges", named: "root", invoker: linux.Cred{Uid: 1000, Gid: 1000},
			want: ClientUser{Uid: 0, Gid: 0, Name: "root", Home: "/root", Privileged: true}},
		{name: "named 0", named: "0", invoker: linux.Cred{Uid: 1000},
			want: ClientUser{Uid: 0, Gid: 0, Name: "root", Home: "/root", Privileged: true}},
		{name: "unknown name", named: "bob", wantErr: `user "bob": no such user`},
		{name: "unknown uid", named: "4242", wantErr: `user "4242": no such user`},
	} {
		got, note, err := ResolveClientUser(tc.named, tc.invoker, fakeUsers)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got.Groups = nil // read from the host's /etc/group
		if got.Uid != tc.want.Uid || got.Gid != tc.want.Gid || got.Name != tc.want.Name || got.Home != tc.want.Home || got.Privileged != tc.want.Privileged {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
		if (note != "") != tc.wantNote {
			t.Errorf("%s: note %q, want one: %v", tc.name, note, tc.wantNote)
		}
	}
}
