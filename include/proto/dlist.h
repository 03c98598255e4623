/*
 * dlist.h — unlinking a node from an intrusive doubly linked list (proto
 * layer; header-only): a node is any struct with `prev` and `next`
 * pointers to its own type, and the list is a head pointer to the first.
 *
 * Owns nothing; the caller holds whatever lock guards the list.
 */
#ifndef LUMEN_DLIST_H
#define LUMEN_DLIST_H

/* Takes node out of the list whose first node is head (an lvalue). */
#define DLIST_UNLINK(head, node)                          \
	do {                                              \
		if ((node)->prev != NULL)                 \
			(node)->prev->next = (node)->next; \
		else                                      \
			(head) = (node)->next;            \
		if ((node)->next != NULL)                 \
			(node)->next->prev = (node)->prev; \
	} while (0)

#endif
