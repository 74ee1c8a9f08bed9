/*
 * Loads a native JVMTI agent into a running JVM, with the agent's options as one argument.
 * `jcmd PID JVMTI.agent_load LIB OPTIONS` splits options at '=' and mangles async-profiler's; the
 * Attach API passes them through untouched. Run as a source file (JDK 11+):
 *
 *   java broker-bench/Attach.java PID /path/to/libasyncProfiler.so "start,event=cpu,interval=1ms,threads"
 */
public final class Attach {
    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: java Attach.java PID AGENT_LIBRARY OPTIONS");
            System.exit(2);
        }
        com.sun.tools.attach.VirtualMachine vm = com.sun.tools.attach.VirtualMachine.attach(args[0]);
        try {
            vm.loadAgentPath(args[1], args[2]);
        } finally {
            vm.detach();
        }
    }
}
