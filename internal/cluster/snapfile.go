package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Snapshots that name a file.
//
// A member's snapshot is its newest checkpoint file, as large as its data.
// Carried inside one raft message, it had to fit a transport frame (256
// MiB) and sat whole in memory on the leader (the storage's prepared
// snapshot) and on the receiver (the frame, then the message). So the
// snapshot's data may instead be a file reference: a few bytes that name
// a file and its size (FileRef). raft holds and hands out only the
// reference; the transport, sending a MsgSnap whose data is one, writes
// the message's frame and then the file's bytes, streamed from disk, on
// the same connection; the receiving transport streams them into a file
// of its own snapshot directory (TransportOptions.SnapshotDir), fsyncs it,
// and delivers the message with a reference to that file. The state
// machine installs the file (it verifies it: a checkpoint checks its own
// checksums). Memory on either side no longer grows with the snapshot.
//
// Data that is not a reference is the snapshot itself, as before (the
// bootstrap snapshot, the in-process simulation's).

// snapFileMagic starts a file reference.
const snapFileMagic = "lockstep snapshot file\x00"

// FileRef is snapshot data naming the file at path, of size bytes.
func FileRef(path string, size int64) []byte {
	b := append([]byte(snapFileMagic), make([]byte, 8)...)
	binary.LittleEndian.PutUint64(b[len(snapFileMagic):], uint64(size))
	return append(b, path...)
}

// ParseFileRef reads a snapshot's data as a file reference; ok is false
// for data that is the snapshot itself.
func ParseFileRef(data []byte) (path string, size int64, ok bool) {
	if len(data) < len(snapFileMagic)+8 || !bytes.HasPrefix(data, []byte(snapFileMagic)) {
		return "", 0, false
	}
	n := binary.LittleEndian.Uint64(data[len(snapFileMagic):])
	if n > 1<<50 {
		return "", 0, false
	}
	return string(data[len(snapFileMagic)+8:]), int64(n), true
}

// sendSnapshotFile writes the file a snapshot's reference names, size
// bytes, to w after its message's frame, renewing the connection's write
// deadline as it goes (a large file takes longer than one batch may).
func sendSnapshotFile(w io.Writer, setDeadline func(time.Time) error, path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cluster: opening the snapshot file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("cluster: the snapshot file: %w", err)
	}
	if st.Size() != size {
		return fmt.Errorf("cluster: the snapshot file %s changed since it was named (size %d, want %d)", path, st.Size(), size)
	}
	buf := make([]byte, 1<<20)
	for left := size; left > 0; {
		n, err := f.Read(buf[:min(int64(len(buf)), left)])
		if n > 0 {
			_ = setDeadline(time.Now().Add(writeTimeout))
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			left -= int64(n)
		}
		if err != nil && left > 0 {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("cluster: reading the snapshot file %s: %w", path, err)
		}
	}
	return nil
}

// snapFilePrefix names the files a transport receives snapshots into.
const snapFilePrefix = "incoming-"

// receiveSnapshotFile reads the size bytes of a snapshot file that follow
// its message on a connection into a new file of dir, fsynced, and
// returns its path. Files of earlier snapshots received and never
// installed are removed first. dir "": the bytes are read and dropped
// (path "").
func receiveSnapshotFile(r io.Reader, dir string, index, term uint64, size int64) (string, error) {
	if dir == "" {
		_, err := io.CopyN(io.Discard, r, size)
		return "", err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", err
	}
	removeSnapshotFiles(dir)
	path := filepath.Join(dir, fmt.Sprintf("%s%020d-%d.snap", snapFilePrefix, index, term))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640)
	if err != nil {
		return "", err
	}
	_, err = io.CopyN(f, r, size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", fmt.Errorf("cluster: receiving a snapshot file: %w", err)
	}
	return path, nil
}

// removeSnapshotFiles removes the snapshot files received into dir.
func removeSnapshotFiles(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), snapFilePrefix) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
