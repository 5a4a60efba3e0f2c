package server

import (
	"net"
	"os"
	"strconv"
	"strings"
)

// What a member tells the others of itself (cluster.Node.SetInfo, sent in
// a message of lockstep's own every two ticks): its SQL address — the
// host and port clients connect to — and its server_uuid. With it the
// 1290 refusal of a secondary, replication_group_members' MEMBER_HOST,
// MEMBER_PORT and MEMBER_ID, and SHOW REPLICA STATUS's Source_Host,
// Source_Port and Source_UUID show what MySQL shows; until a member's
// message has arrived they fall back to its group address and server id.

// memberInfoMagic starts the info: a message of another version (or
// none) decodes as unknown.
const memberInfoMagic = "lockstep-member-1"

// encodeMemberInfo: "lockstep-member-1\n<uuid>\n<host:port>".
func encodeMemberInfo(uuid, sqlAddr string) []byte {
	return []byte(memberInfoMagic + "\n" + uuid + "\n" + sqlAddr)
}

// decodeMemberInfo returns the uuid and SQL address; ok false for an
// info that is not one.
func decodeMemberInfo(b []byte) (uuid, sqlAddr string, ok bool) {
	parts := strings.Split(string(b), "\n")
	if len(parts) != 3 || parts[0] != memberInfoMagic {
		return "", "", false
	}
	return parts[1], parts[2], true
}

// reportedSQLAddr is the SQL address a member announces: the address it
// listens on, or, when that is a wildcard (0.0.0.0, ::), the host of its
// group address (which the other members reach it by), else its host
// name. (MySQL's report_host and report_port options are not there yet.)
func reportedSQLAddr(bind, groupAddr string, port int) string {
	host := bind
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = ""
		if h, _, err := net.SplitHostPort(groupAddr); err == nil {
			if ip := net.ParseIP(h); h != "" && (ip == nil || !ip.IsUnspecified()) {
				host = h
			}
		}
		if host == "" {
			host, _ = os.Hostname()
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// setSQLAddress announces this member's SQL address, once the server
// listens (its port may have been chosen then).
func (g *group) setSQLAddress(bind string, port int) {
	g.node.SetInfo(encodeMemberInfo(g.uuid, reportedSQLAddr(bind, g.cfg.GroupLocalAddress, port)))
}

// memberSQL returns member id's server_uuid and SQL address as this
// member last heard them; ok false while it has not.
func (g *group) memberSQL(id uint64) (uuid, sqlAddr string, ok bool) {
	return decodeMemberInfo(g.node.MemberInfo(id))
}

// primaryText names the primary in a secondary's 1290: its SQL address,
// or its group address while the SQL address is not known.
func (g *group) primaryText(lead uint64) string {
	if _, addr, ok := g.memberSQL(lead); ok {
		return "the primary is member " + strconv.FormatUint(lead, 10) + " at " + addr
	}
	return "the primary is member " + strconv.FormatUint(lead, 10) + " (SQL address not known yet; group address " + g.addrs.get(lead) + ")"
}
