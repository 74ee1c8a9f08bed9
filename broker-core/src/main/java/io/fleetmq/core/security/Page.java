package io.fleetmq.core.security;

import java.util.List;

/**
 * One page of a listing.
 *
 * @param items    this page's items
 * @param total    items on all pages
 * @param page     this page's number, from 0
 * @param pageSize the page size asked for
 */
public record Page<T>(List<T> items, long total, int page, int pageSize) {

    public Page {
        items = List.copyOf(items);
    }
}
