package server

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"lockstep/internal/config"
)

// The group name is the UUID a group's GTIDs carry on every member (MySQL
// Group Replication's group_replication_group_name), so that a GTID set
// read on one member means the same on another (WAIT_FOR_EXECUTED_GTID_SET).
// It is --group-name, or derived from --group-seeds (members and addresses,
// in id order) when the member is bootstrapped — founding members started
// with the same seeds derive the same name — and kept in DATADIR/group.cnf
// from then on.

const groupNameFile = "group.cnf"

// deriveGroupName is a UUID (version 5 layout) from the seeds.
func deriveGroupName(seeds map[uint64]string) string {
	ids := make([]uint64, 0, len(seeds))
	for id := range seeds {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var b strings.Builder
	b.WriteString("lockstep group:")
	for _, id := range ids {
		b.WriteString(strconv.FormatUint(id, 10) + "=" + seeds[id] + ",")
	}
	h := sha256.Sum256([]byte(b.String()))
	h[6] = h[6]&0x0f | 0x50
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// loadGroupName reads the member's group name, or (at its first start as
// a member, when create) chooses and keeps it; "" when there is none and
// create is false (a new member learns it from the group).
func loadGroupName(cfg config.Config, create bool) (string, error) {
	path := filepath.Join(cfg.Datadir, groupNameFile)
	b, err := os.ReadFile(path)
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && strings.TrimSpace(k) == "group-name" {
				name := strings.TrimSpace(v)
				if !config.IsUUID(name) {
					break
				}
				if cfg.GroupName != "" && cfg.GroupName != name {
					return "", fmt.Errorf("--group-name %s, but this member belongs to group %s (%s)", cfg.GroupName, name, path)
				}
				return name, nil
			}
		}
		return "", fmt.Errorf("%s: no valid group-name line", path)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if !create {
		return "", nil
	}
	name := cfg.GroupName
	if name == "" {
		name = deriveGroupName(cfg.GroupSeeds)
	}
	return name, keepGroupName(cfg.Datadir, name)
}

// keepGroupName writes DATADIR/group.cnf.
func keepGroupName(datadir, name string) error {
	path := filepath.Join(datadir, groupNameFile)
	tmp := path + ".tmp"
	if err := writeFileSync(tmp, []byte("[group]\ngroup-name="+name+"\n"), 0o640); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(datadir)
}

// groupName is the group's name ("" while a new member has not learnt it).
func (g *group) groupName() string {
	if p := g.gtidName.Load(); p != nil {
		return *p
	}
	return ""
}

// learnGroupName keeps the name a new member learnt from its first
// snapshot: a checkpoint's GTIDs carry it; the bootstrap snapshot names
// the founding members, from whose addresses the founders derived it.
func (g *group) learnGroupName(fromGTID string, founders []uint64) error {
	if g.groupName() != "" {
		return nil
	}
	name, _, _ := strings.Cut(fromGTID, ":")
	if !config.IsUUID(name) {
		seeds := map[uint64]string{}
		for _, id := range founders {
			seeds[id] = g.addrs.get(id)
		}
		name = deriveGroupName(seeds)
	}
	if err := keepGroupName(g.cfg.Datadir, name); err != nil {
		return err
	}
	g.gtidName.Store(&name)
	fmt.Fprintf(g.w, "lockstep: group: member %d belongs to group %s\n", g.cfg.ServerID, name)
	return nil
}
