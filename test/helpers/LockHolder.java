// Takes a Kafka broker's lock on DIR/.lock exactly as Kafka's FileLock does (FileChannel.tryLock:
// an exclusive POSIX record lock). Run with `java LockHolder.java DIR [probe]` (Java 11+ single-file).
// Prints "locked" and holds the lock until stdin closes; prints "busy" and exits 4 when another
// process holds a conflicting lock. With "probe" it exits 0 right after locking.
import java.io.File;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.StandardOpenOption;

public class LockHolder {
  public static void main(String[] args) throws Exception {
    File f = new File(args[0], ".lock");
    FileChannel ch = FileChannel.open(f.toPath(), StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
    FileLock lock = ch.tryLock();
    if (lock == null) {
      System.out.println("busy");
      System.exit(4);
    }
    System.out.println("locked");
    System.out.flush();
    if (args.length > 1 && args[1].equals("probe")) System.exit(0);
    while (System.in.read() != -1) {}
  }
}
