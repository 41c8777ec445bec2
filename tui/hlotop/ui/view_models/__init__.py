"""What the panes show, worked out from the model and the analysis without Textual
(an import contract checks it): the grouped live set's tree, the diff's data, the
schedule steps' indexes, the allocation tree's layout. Tested without an app."""
