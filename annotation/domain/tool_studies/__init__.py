"""Studies moving in from other annotation tools (Label Studio, Argilla, Potato), read into one plain
shape (``study.Study``) that ``annotation.services.studies`` loads as a dataset, a project and its answers;
and the Label Studio JSON that a Timbang project is exported as."""
