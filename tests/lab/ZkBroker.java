// A Kafka broker's side of ZooKeeper, on the Java client Kafka embeds, for the lab's tests: it holds
// /brokers/ids/ID (ephemeral) under its own session, and with --controller also /controller and
// /controller_epoch, as a broker that won the controller election does. When its session expires it
// opens a new one and registers again, as Kafka does. Each (re)registration is one line on stdout:
// "registered ID 0xSESSION". SIGTERM closes its session (so its registrations go at once) and ends it.
//
//   java -cp "$(zklab classpath 3.8.0)" ZkBroker.java CONNECT SESSION_MS ID [--controller]

import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

public class ZkBroker {
  private static final BlockingQueue<String> events = new LinkedBlockingQueue<>();
  private static final CountDownLatch closed = new CountDownLatch(1);

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: ZkBroker CONNECT SESSION_MS ID [--controller]");
      System.exit(64);
    }
    String connect = args[0];
    int sessionMs = Integer.parseInt(args[1]);
    String id = args[2];
    boolean controller = args.length > 3 && args[3].equals("--controller");
    // The JVM halts when its hooks return: this one waits (5 s at most) for the session's close.
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      events.add("stop");
      try {
        closed.await(5, TimeUnit.SECONDS);
      } catch (InterruptedException ignored) {
      }
    }));

    ZooKeeper zk = register(connect, sessionMs, id, controller);
    while (true) {
      String event = events.take();
      if (event.equals("stop")) break;
      if (event.equals("expired")) {
        zk.close();
        zk = register(connect, sessionMs, id, controller);
      }
    }
    zk.close();
    System.out.println("closed " + id);
    System.out.flush();
    closed.countDown();
  }

  // A new session, connected, holding the registrations; retried until it is (the ensemble may be
  // electing a leader).
  private static ZooKeeper register(String connect, int sessionMs, String id, boolean controller) throws Exception {
    while (true) {
      ZooKeeper zk = new ZooKeeper(connect, sessionMs, event -> {
        if (event.getState() == Watcher.Event.KeeperState.Expired) events.add("expired");
      });
      try {
        for (int i = 0; i < 100 && zk.getState() != ZooKeeper.States.CONNECTED; ++i) Thread.sleep(100);
        ensure(zk, "/brokers");
        ensure(zk, "/brokers/ids");
        create(zk, "/brokers/ids/" + id, "{\"host\":\"127.0.0.1\",\"port\":9092}");
        if (controller) {
          create(zk, "/controller", "{\"version\":1,\"brokerid\":" + id + ",\"timestamp\":\"" + System.currentTimeMillis() + "\"}");
          bumpEpoch(zk);
        }
        System.out.printf("registered %s 0x%x%n", id, zk.getSessionId());
        System.out.flush();
        return zk;
      } catch (KeeperException e) {
        System.err.println("ZkBroker " + id + ": " + e + "; trying again");
        zk.close();
        TimeUnit.MILLISECONDS.sleep(500);
      }
    }
  }

  private static void ensure(ZooKeeper zk, String path) throws Exception {
    try {
      zk.create(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
    } catch (KeeperException.NodeExistsException ignored) {
    }
  }

  // Ephemeral; one left by this broker's expired session may still be there until the server
  // removes it: wait for that, as Kafka's registration does.
  private static void create(ZooKeeper zk, String path, String data) throws Exception {
    for (int i = 0;; ++i) {
      try {
        zk.create(path, data.getBytes(StandardCharsets.UTF_8), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
        return;
      } catch (KeeperException.NodeExistsException e) {
        if (i >= 100) throw e;
        TimeUnit.MILLISECONDS.sleep(200);
      }
    }
  }

  private static void bumpEpoch(ZooKeeper zk) throws Exception {
    Stat stat = new Stat();
    try {
      byte[] data = zk.getData("/controller_epoch", false, stat);
      int epoch = Integer.parseInt(new String(data, StandardCharsets.UTF_8).trim());
      zk.setData("/controller_epoch", Integer.toString(epoch + 1).getBytes(StandardCharsets.UTF_8), stat.getVersion());
    } catch (KeeperException.NoNodeException e) {
      zk.create("/controller_epoch", "1".getBytes(StandardCharsets.UTF_8), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
    }
  }
}
