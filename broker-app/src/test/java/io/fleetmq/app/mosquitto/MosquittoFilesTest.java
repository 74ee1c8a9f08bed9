package io.fleetmq.app.mosquitto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Mosquitto's files to rules, without a node: what is translated, what is reported, what is refused. */
class MosquittoFilesTest {

    @TempDir
    Path dir;

    private Path file(String name, String text) throws Exception {
        return Files.writeString(dir.resolve(name), text);
    }

    @Test
    void aclLinesBecomeAllowAndDenyRules() throws Exception {
        ImportPlan plan = new ImportPlan();
        MosquittoFiles.readPasswd(file("passwd", "u1:$7$101$AAAA$BBBB\nu2:plain\n"), plan);
        MosquittoFiles.readAcl(file("acl", """
                topic deny private/#
                topic public/#
                user u1
                topic read in/#
                topic write out/%c
                user ghost
                topic read x
                pattern deny %u/secret
                pattern write devices/%c/up
                """), plan);
        ImportPlan.User u1 = plan.users.get("u1");
        assertEquals(List.of("in/#", "!${username}/secret"), List.copyOf(u1.subscribe));
        assertEquals(List.of("out/%c", "!${username}/secret", "devices/${clientid}/up"), List.copyOf(u1.publish));
        ImportPlan.User u2 = plan.users.get("u2");
        assertEquals("plain", u2.plainPassword);
        assertEquals(List.of("!${username}/secret"), List.copyOf(u2.subscribe));
        assertEquals(List.of("!private/#", "public/#"), List.copyOf(plan.anonymousSubscribe));
        assertEquals(List.of("!private/#", "public/#", "devices/${clientid}/up"), List.copyOf(plan.anonymousPublish));
        assertNull(plan.users.get("ghost"));
        assertTrue(plan.untranslated.stream().anyMatch(l -> l.startsWith(dir.resolve("acl") + ":6: user 'ghost'")),
                plan.untranslated.toString());
    }

    @Test
    void placeholdersMustBeWholeLevels() {
        assertEquals("a/${clientid}/${username}", MosquittoFiles.placeholders("a/%c/%u"));
        assertNull(MosquittoFiles.placeholders("a/%c-x"));
    }

    @Test
    void malformedLinesNameFileAndLine() throws Exception {
        Path passwd = file("p", "ok:$7$1$AA$BB\nno-colon\n");
        MosquittoFileException e = assertThrows(MosquittoFileException.class,
                () -> MosquittoFiles.readPasswd(passwd, new ImportPlan()));
        assertTrue(e.getMessage().startsWith(passwd + ":2:"), e.getMessage());
        Path acl = file("a", "topic read a\nfrobnicate x\n");
        e = assertThrows(MosquittoFileException.class, () -> MosquittoFiles.readAcl(acl, new ImportPlan()));
        assertTrue(e.getMessage().startsWith(acl + ":2: unknown keyword"), e.getMessage());
        Path json = file("d.json", "{\n\"clients\": [\n");
        e = assertThrows(MosquittoFileException.class, () -> MosquittoFiles.readDynsec(json, new ImportPlan()));
        assertTrue(e.getMessage().startsWith(json + ":"), e.getMessage());
    }

    @Test
    void dynsecPrioritiesThatCannotBeKeptAreReported() throws Exception {
        ImportPlan plan = new ImportPlan();
        MosquittoFiles.readDynsec(file("d.json", """
                {"defaultACLAccess": {"publishClientSend": true},
                 "clients": [{"username": "c", "clientid": "c-1", "password": "AAAA", "salt": "BBBB", "iterations": 101,
                              "roles": [{"rolename": "r"}]},
                             {"username": "off", "password": "AAAA", "salt": "BBBB", "iterations": 101, "disabled": true}],
                 "roles": [{"rolename": "r", "acls": [
                     {"acltype": "publishClientSend", "topic": "a/b", "priority": 9, "allow": true},
                     {"acltype": "publishClientSend", "topic": "a/#", "priority": 1, "allow": false},
                     {"acltype": "unsubscribe", "topic": "x", "allow": false}]}]}
                """), plan);
        ImportPlan.User c = plan.users.get("c");
        assertEquals("$7$101$BBBB$AAAA", c.hash);
        assertEquals("c-1", c.clientId);
        assertEquals(List.of("a/b", "!a/#", "#"), List.copyOf(c.publish));
        assertTrue(c.subscribe.isEmpty());
        assertNull(plan.users.get("off"));
        String report = plan.untranslated.toString();
        assertTrue(report.contains("higher priority than a deny") && report.contains("disabled")
                && report.contains("unsubscribing is always allowed"), report);
    }
}
