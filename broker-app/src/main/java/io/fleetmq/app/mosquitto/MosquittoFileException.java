package io.fleetmq.app.mosquitto;

/** A file that cannot be read as what it should be; the message starts with file and line. */
final class MosquittoFileException extends RuntimeException {

    MosquittoFileException(String where, String message) {
        super(where + ": " + message);
    }
}
