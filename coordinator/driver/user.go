package driver

import (
	"errors"
	"fmt"
	"os/user"
	"strconv"

	"github.com/tcs-robotics/tcs/coordinator/linux"
)

// ClientUser is whom the clients a Mechanism spawns run as.
type ClientUser struct {
	Uid, Gid int
	Groups   []int  // supplementary groups
	Name     string // "" when the uid has no entry in the user database
	Home     string // the user's home directory, "" when unknown
	// Privileged keeps root's capabilities and lifts the real-time
	// limits: only when root was named (user: root, --user root).
	Privileged bool
}

// String names the user as logs do: "alice (uid 1000)".
func (u ClientUser) String() string {
	if u.Name == "" {
		return "uid " + strconv.Itoa(u.Uid)
	}
	return fmt.Sprintf("%s (uid %d)", u.Name, u.Uid)
}

// UserLookup finds a user by name or by uid, as os/user does.
type UserLookup struct {
	ByName func(string) (*user.User, error)
	ByID   func(string) (*user.User, error)
}

// SystemUsers looks users up in the system's user database.
var SystemUsers = UserLookup{ByName: user.Lookup, ByID: user.LookupId}

// ResolveClientUser says whom clients run as: named when it is not empty
// (a user name or a uid, from the scenario's user: or --user), else the
// user who invoked tcs (invoker: sudo's SUDO_UID/SUDO_GID, or tcs's own
// uid). Clients run without privileges (see Unprivilege) unless named is
// root. When they run as root without having asked (tcs started as root,
// not through sudo), note says so, for the log.
func ResolveClientUser(named string, invoker linux.Cred, lookup UserLookup) (u ClientUser, note string, err error) {
	if named != "" {
		found, err := lookupNamed(named, lookup)
		if err != nil {
			return ClientUser{}, "", err
		}
		u, err = fromUser(found)
		if err != nil {
			return ClientUser{}, "", fmt.Errorf("user %q: %w", named, err)
		}
		u.Privileged = u.Uid == 0
		return u, "", nil
	}
	u = ClientUser{Uid: invoker.Uid, Gid: invoker.Gid}
	if found, err := lookup.ByID(strconv.Itoa(invoker.Uid)); err == nil {
		// The invoker's group is sudo's SUDO_GID, which may differ from the
		// user's primary one; keep it.
		v, err := fromUser(found)
		if err != nil {
			return ClientUser{}, "", fmt.Errorf("uid %d: %w", invoker.Uid, err)
		}
		u.Name, u.Home, u.Groups = v.Name, v.Home, v.Groups
	}
	if u.Uid == 0 {
		note = "clients run as root without capabilities and without real-time privileges: tcs runs as root, " +
			"not through sudo, and no user is named; as root a client could still leave its cgroups. " +
			"Set user: in the scenario or --user to run them as another user, or name root to keep its privileges"
	}
	return u, note, nil
}

// lookupNamed finds named as a user name, else as a uid.
func lookupNamed(named string, lookup UserLookup) (*user.User, error) {
	u, err := lookup.ByName(named)
	if err == nil {
		return u, nil
	}
	var unknown user.UnknownUserError
	if !errors.As(err, &unknown) {
		return nil, fmt.Errorf("user %q: %w", named, err)
	}
	if _, perr := strconv.ParseUint(named, 10, 32); perr == nil {
		if u, err = lookup.ByID(named); err == nil {
			return u, nil
		}
	}
	return nil, fmt.Errorf("user %q: no such user in the user database (/etc/passwd)", named)
}

// fromUser reads a user database entry.
func fromUser(u *user.User) (ClientUser, error) {
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return ClientUser{}, fmt.Errorf("uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return ClientUser{}, fmt.Errorf("gid %q: %w", u.Gid, err)
	}
	c := ClientUser{Uid: uid, Gid: gid, Name: u.Username, Home: u.HomeDir}
	if ids, err := u.GroupIds(); err == nil {
		for _, s := range ids {
			if g, err := strconv.Atoi(s); err == nil && g != gid {
				c.Groups = append(c.Groups, g)
			}
		}
	}
	return c, nil
}
