/**
 * Whether a name still leads to the file an fd holds, asked without a stat of that file.
 *
 * A stat of a file tells the kernel its timestamps were looked at, and on kernels with fine-grained ("multigrain")
 * timestamps the next write then stamps the file anew, which dirties its inode: on ext4 without a journal, every
 * fdatasync after such a write also writes the inode's block, one more synchronous write per sync (a run-log step
 * that stat'ed its segment between its writes synced in 133–147 µs, without the stat in 97–103 µs;
 * docs/decisions.md, D14 "Room"). On Linux the fd's own link in /proc names the path its file is reached by now
 * (a rename moves it, an unlink or a rename over it marks it deleted), and reading that link stats nothing.
 *
 * The link is compared with the absolute path the name resolved to when the watch began, and only where that
 * path held no symlink: then the two strings are equal exactly when walking the name reaches the fd's file
 * through the same folders, unless a mount now covers one of them. A folder mounted over the file's folder or any
 * above it hides the file while its link still names the same path, so the file's folder is looked at too (one
 * lstat of the folder, not of the file: its identity must be the one it had). A file mounted over the file itself
 * is not seen (only the mount table tells, and reading it costs more than the stat this saves). Anywhere else
 * (another system, a path through a symlink, /proc not mounted) the watch answers undefined and the caller stats
 * the name as before.
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import path from "node:path";

/** True: `file` still leads to the fd's file; false: it may not (stat the name to find out). */
export type OpenNameWatch = () => boolean;

/** A watch over `file` for the open `fd`, or undefined where it cannot be told without a stat (module comment). */
export function watchOpenName(fd: number, file: string): OpenNameWatch | undefined {
  if (process.platform !== "linux") return undefined;
  const link = `/proc/self/fd/${fd}`;
  try {
    const absolute = path.resolve(file);
    const folder = path.dirname(absolute);
    const at = lstatSync(folder);
    if (realpathSync(absolute) !== absolute || readlinkSync(link) !== absolute) return undefined;
    return () => {
      try {
        if (readlinkSync(link) !== absolute) return false;
        const now = lstatSync(folder);
        return now.ino === at.ino && now.dev === at.dev;
      } catch {
        return false;
      }
    };
  } catch {
    return undefined;
  }
}
